"""Pages of audits (one module per area); the URL map is audits/urls.py."""
