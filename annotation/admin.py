"""Admin registrations of annotation; every model is registered with ResearcherModelAdmin."""
