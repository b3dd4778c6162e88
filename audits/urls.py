"""Pages of audits."""

app_name = "audits"
urlpatterns: list = []
