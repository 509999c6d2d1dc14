"""SaslHandshake (17) and SaslAuthenticate (36) once a connection is past authentication,
and DescribeUserScramCredentials (50), AlterUserScramCredentials (51).

The SASL exchange itself is the authenticator's (`requests/authenticator.py`), which
answers these two APIs before a SASL connection is authenticated; a request of either
afterwards (or on a listener without SASL) reaches the handlers here and gets
ILLEGAL_SASL_STATE, as Kafka's request handler answers it.

SCRAM credentials are checked as Kafka's controller checks them (ScramControlManager)
and described as its metadata image does (ScramImage): errors per user, a user altered
twice in one request refused, a credential that does not exist not deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.scram import BY_TYPE, MAX_ITERATIONS, credential

from ...state.scram_credentials import credential_record
from ..routes import serves

if TYPE_CHECKING:
    from kcsim.storage import Record

    from ...state.broker_state import BrokerState

SaslHandshakeResponse = response_class(17)
SaslAuthenticateResponse = response_class(36)
DescribeResponse = response_class(50)
AlterResponse = response_class(51)
_Described = DescribeResponse.DescribeUserScramCredentialsResult
_Altered = AlterResponse.AlterUserScramCredentialsResult

ALREADY_AUTHENTICATED = "SaslAuthenticate request received after successful authentication"
_TWICE = "A user credential cannot be altered twice in the same request"
_DESCRIBED_TWICE = ("Cannot describe SCRAM credentials for the same user twice in a single "
                    "request: ")
_NO_SUCH_USER = "Attempt to describe a user credential that does not exist: "


@serves(17)
def sasl_handshake(broker: BrokerState, ctx: Any, request: Any) -> Any:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE)


@serves(36)
def sasl_authenticate(broker: BrokerState, ctx: Any, request: Any) -> Any:
    return SaslAuthenticateResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE,
                                    error_message=ALREADY_AUTHENTICATED)


@serves(50)
def describe_user_scram_credentials(broker: BrokerState, ctx: Any, request: Any) -> Any:
    store = broker.scram_credentials
    twice: dict[str, bool] = {}
    if request.users:
        for user in request.users:
            twice[user.name] = user.name in twice
    else:
        twice = dict.fromkeys(store.users(), False)
    results = []
    for name, duplicate in twice.items():
        if duplicate:
            results.append(_Described(user=name, error_code=ErrorCode.DUPLICATE_RESOURCE,
                                      error_message=_DESCRIBED_TWICE + name))
            continue
        found = store.of(name)
        if not found:
            results.append(_Described(user=name, error_code=ErrorCode.RESOURCE_NOT_FOUND,
                                      error_message=_NO_SUCH_USER + name))
            continue
        results.append(_Described(user=name, credential_infos=[
            DescribeResponse.CredentialInfo(mechanism=m, iterations=c.iterations)
            for m, c in found.items()]))
    return DescribeResponse(results=results)


def _name_and_mechanism(name: str, mechanism: int) -> tuple[int, str] | None:
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism not in BY_TYPE:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


@serves(51)
def alter_user_scram_credentials(broker: BrokerState, ctx: Any, request: Any) -> Any:
    store = broker.scram_credentials
    errors: dict[str, tuple[int, str]] = {}
    deletions: dict[str, Any] = {}
    upsertions: dict[str, Any] = {}
    for deletion in request.deletions:
        name = deletion.name
        if name in errors:
            continue
        if deletions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
            continue
        error = _name_and_mechanism(name, deletion.mechanism)
        if error is None and store.get(name, deletion.mechanism) is None:
            error = (ErrorCode.RESOURCE_NOT_FOUND,
                     "Attempt to delete a user credential that does not exist")
        if error is not None:
            errors[name] = error
        else:
            deletions[name] = deletion
    for upsertion in request.upsertions:
        name = upsertion.name
        if name in errors:
            continue
        if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
            continue
        error = _name_and_mechanism(name, upsertion.mechanism)
        if error is None:
            if upsertion.iterations < BY_TYPE[upsertion.mechanism].min_iterations:
                error = (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
            elif upsertion.iterations > MAX_ITERATIONS:
                error = (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        if error is not None:
            errors[name] = error
        else:
            upsertions[name] = upsertion
    records: list[Record] = []
    results = []
    for name, deletion in deletions.items():
        results.append(_Altered(user=name, error_message=None))
        records.append(credential_record(name, deletion.mechanism, None))
    for name, upsertion in upsertions.items():
        mechanism = BY_TYPE[upsertion.mechanism]
        records.append(credential_record(name, mechanism.type, credential(
            mechanism, upsertion.salt, upsertion.salted_password, upsertion.iterations)))
        results.append(_Altered(user=name, error_message=None))
    results += [_Altered(user=name, error_code=code, error_message=message)
                for name, (code, message) in errors.items()]
    return broker.change(records, AlterResponse(results=results))
