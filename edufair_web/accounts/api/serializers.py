"""What the accounts API reads from its callers."""

from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer

from edufair_web.text_limits import LINE_MAX

# Far beyond any real password, and short enough that a hostile log-in cannot make the server hash megabytes.
PASSWORD_MAX = 4096


class CredentialsSerializer(AuthTokenSerializer):
    """DRF's username and password check (`validate` authenticates), with both strings bounded."""

    username = serializers.CharField(label="Username", write_only=True, max_length=LINE_MAX)
    password = serializers.CharField(
        label="Password",
        style={"input_type": "password"},
        trim_whitespace=False,
        write_only=True,
        max_length=PASSWORD_MAX,
    )
