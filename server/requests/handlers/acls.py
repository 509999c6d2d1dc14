"""DescribeAcls (29), CreateAcls (30) and DeleteAcls (31): the authorizer's ACLs, managed as
Kafka's AclApis and controller manage them.

Without `--authorizer` each answers SECURITY_DISABLED, as Kafka does with no authorizer
configured (the ACLs of the log are still kept, and checked once one is). Creating an ACL
that exists changes nothing and succeeds; an ACL Kafka would not store gets INVALID_REQUEST
with Kafka's message; a filter with an UNKNOWN element too (where Kafka closes the
connection, having failed to read the request). Who may call them (ALTER or DESCRIBE on
the cluster) is checked with every other API's rights (`requests/access.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode

from ...acl.model import (
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    binding_problem,
    enum_or_unknown,
)
from ...acl.records import acl_record
from ..routes import serves

if TYPE_CHECKING:
    from kcsim.storage import Record

    from ...state.broker_state import BrokerState

DescribeAclsResponse = response_class(29)
CreateAclsResponse = response_class(30)
DeleteAclsResponse = response_class(31)
_Resource = DescribeAclsResponse.DescribeAclsResource
_Description = DescribeAclsResponse.AclDescription
_Created = CreateAclsResponse.AclCreationResult
_FilterResult = DeleteAclsResponse.DeleteAclsFilterResult
_Matching = DeleteAclsResponse.DeleteAclsMatchingAcl

NO_AUTHORIZER = "No Authorizer is configured."


def _filter(item: Any) -> AclFilter:
    return AclFilter(ResourceType(enum_or_unknown(ResourceType, item.resource_type_filter)),
                     item.resource_name_filter,
                     PatternType(enum_or_unknown(PatternType, item.pattern_type_filter)),
                     item.principal_filter, item.host_filter,
                     Operation(enum_or_unknown(Operation, item.operation)),
                     Permission(enum_or_unknown(Permission, item.permission_type)))


def _filter_problem(selector: AclFilter) -> str | None:
    if selector.pattern_type == PatternType.UNKNOWN or \
            selector.resource_type == ResourceType.UNKNOWN:
        return "Unknown patternFilter."
    if selector.operation == Operation.UNKNOWN or selector.permission == Permission.UNKNOWN:
        return "Unknown entryFilter."
    return None


@serves(29)
def describe_acls(broker: BrokerState, ctx: Any, request: Any) -> Any:
    if broker.authorizer is None:
        return DescribeAclsResponse(error_code=ErrorCode.SECURITY_DISABLED,
                                    error_message="No Authorizer is configured on the broker",
                                    resources=[])
    selector = _filter(request)
    problem = _filter_problem(selector)
    if problem is not None:
        return DescribeAclsResponse(error_code=ErrorCode.INVALID_REQUEST, error_message=problem,
                                    resources=[])
    by_pattern: dict[tuple[int, str, int], list[Any]] = {}
    for acl in broker.acls.select(selector):
        by_pattern.setdefault((acl.resource_type, acl.name, acl.pattern_type), []).append(
            _Description(principal=acl.principal, host=acl.host, operation=acl.operation,
                         permission_type=acl.permission))
    return DescribeAclsResponse(error_code=0, error_message=None, resources=[
        _Resource(resource_type=kind, resource_name=name, pattern_type=pattern, acls=acls)
        for (kind, name, pattern), acls in by_pattern.items()])


def _binding(item: Any) -> AclBinding:
    return AclBinding(ResourceType(enum_or_unknown(ResourceType, item.resource_type)),
                      item.resource_name,
                      PatternType(enum_or_unknown(PatternType, item.resource_pattern_type)),
                      item.principal, item.host,
                      Operation(enum_or_unknown(Operation, item.operation)),
                      Permission(enum_or_unknown(Permission, item.permission_type)))


@serves(30)
def create_acls(broker: BrokerState, ctx: Any, request: Any) -> Any:
    if broker.authorizer is None:
        return CreateAclsResponse(results=[
            _Created(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER)
            for _ in request.creations])
    records: list[Record] = []
    made: set[AclBinding] = set()
    results = []
    for item in request.creations:
        acl = _binding(item)
        problem = binding_problem(acl)
        if problem is not None:
            results.append(_Created(error_code=ErrorCode.INVALID_REQUEST, error_message=problem))
            continue
        if acl not in broker.acls and acl not in made:
            made.add(acl)
            records.append(acl_record(acl, broker.now_ms))
        results.append(_Created(error_code=0, error_message=None))
    return broker.change(records, CreateAclsResponse(results=results))


@serves(31)
def delete_acls(broker: BrokerState, ctx: Any, request: Any) -> Any:
    if broker.authorizer is None:
        return DeleteAclsResponse(filter_results=[
            _FilterResult(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER,
                          matching_acls=[])
            for _ in request.filters])
    records: list[Record] = []
    gone: set[AclBinding] = set()
    results = []
    for item in request.filters:
        selector = _filter(item)
        problem = _filter_problem(selector)
        if problem is not None:
            results.append(_FilterResult(error_code=ErrorCode.INVALID_REQUEST,
                                         error_message=problem, matching_acls=[]))
            continue
        matching = []
        for acl in broker.acls.select(selector):
            if acl in gone:
                continue
            gone.add(acl)
            records.append(acl_record(acl, None))
            matching.append(_Matching(
                error_code=0, error_message=None, resource_type=acl.resource_type,
                resource_name=acl.name, pattern_type=acl.pattern_type, principal=acl.principal,
                host=acl.host, operation=acl.operation, permission_type=acl.permission))
        results.append(_FilterResult(error_code=0, error_message=None, matching_acls=matching))
    return broker.change(records, DeleteAclsResponse(filter_results=results))
