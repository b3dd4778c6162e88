"""How long a text a person may write into EduFair, by kind (pure: constants only).

Every text a page or the API stores from its user is bounded by one of these, so that no request can fill the
database, the pages that show the text, or the exports that carry it with megabytes in one field. Model text
fields take them as `max_length` (Django's model forms and DRF's model serializers then refuse a longer value
with a message naming the limit); plain forms and serializers take them directly. Uploaded files are bounded
separately, by size (edufair_web.upload_limits). Tested for every form and every JSON request body of the API
in edufair_web/tests/test_text_limits.py.
"""

LINE_MAX = 200  # one line: a name, a label value, a URL parameter's name, a code
NOTE_MAX = 5_000  # a paragraph or a few: a comment, a note, a justification, a rationale, a description
DOCUMENT_MAX = 100_000  # a document: a guideline, a prompt template, a judge prompt
