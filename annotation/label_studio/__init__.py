"""Label Studio both ways: the label config, the task export and the import of a Label Studio project export."""
