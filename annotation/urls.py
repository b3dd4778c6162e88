"""Pages of annotation."""

app_name = "annotation"
urlpatterns: list = []
