"""Pages of annotation: researcher pages (projects, stages), annotator training pages, norming threads."""
