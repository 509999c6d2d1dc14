"""SaslHandshake (17), SaslAuthenticate (36): how a client authenticates on a SASL listener;
DescribeUserScramCredentials (50), AlterUserScramCredentials (51): the SCRAM credentials
brokers check it against."""

from ..schema import Api, array, f, request, response, struct

SaslHandshakeRequest = request(
    "SaslHandshakeRequest", 17, "0-1", "none",
    f("mechanism", "string"),
)

SaslHandshakeResponse = response(
    "SaslHandshakeResponse", 17, "0-1", "none",
    f("error_code", "int16"),
    f("mechanisms", array("string")),
)

SaslAuthenticateRequest = request(
    "SaslAuthenticateRequest", 36, "0-2", "2+",
    f("auth_bytes", "bytes"),
)

SaslAuthenticateResponse = response(
    "SaslAuthenticateResponse", 36, "0-2", "2+",
    f("error_code", "int16"),
    f("error_message", "string", "0+", nullable="0+"),
    f("auth_bytes", "bytes", default=b""),
    f("session_lifetime_ms", "int64", "1+", default=0),
)

DescribeUserScramCredentialsRequest = request(
    "DescribeUserScramCredentialsRequest", 50, "0", "0+",
    f("users", array(struct(
        "UserName",
        f("name", "string"),
    )), nullable="0+"),
)

DescribeUserScramCredentialsResponse = response(
    "DescribeUserScramCredentialsResponse", 50, "0", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", "0+", nullable="0+"),
    f("results", array(struct(
        "DescribeUserScramCredentialsResult",
        f("user", "string"),
        f("error_code", "int16"),
        f("error_message", "string", "0+", nullable="0+"),
        f("credential_infos", array(struct(
            "CredentialInfo",
            f("mechanism", "int8"),
            f("iterations", "int32"),
        ))),
    ))),
)

AlterUserScramCredentialsRequest = request(
    "AlterUserScramCredentialsRequest", 51, "0", "0+",
    f("deletions", array(struct(
        "ScramCredentialDeletion",
        f("name", "string"),
        f("mechanism", "int8"),
    ))),
    f("upsertions", array(struct(
        "ScramCredentialUpsertion",
        f("name", "string"),
        f("mechanism", "int8"),
        f("iterations", "int32"),
        f("salt", "bytes"),
        f("salted_password", "bytes"),
    ))),
)

AlterUserScramCredentialsResponse = response(
    "AlterUserScramCredentialsResponse", 51, "0", "0+",
    f("throttle_time_ms", "int32"),
    f("results", array(struct(
        "AlterUserScramCredentialsResult",
        f("user", "string"),
        f("error_code", "int16"),
        f("error_message", "string", "0+", nullable="0+"),
    ))),
)

APIS = (
    Api(17, "SaslHandshake", SaslHandshakeRequest, SaslHandshakeResponse),
    Api(36, "SaslAuthenticate", SaslAuthenticateRequest, SaslAuthenticateResponse),
    Api(50, "DescribeUserScramCredentials", DescribeUserScramCredentialsRequest,
        DescribeUserScramCredentialsResponse),
    Api(51, "AlterUserScramCredentials", AlterUserScramCredentialsRequest,
        AlterUserScramCredentialsResponse),
)
