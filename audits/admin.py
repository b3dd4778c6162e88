"""Admin registrations of audits; every model is registered with ResearcherModelAdmin."""
