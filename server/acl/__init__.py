"""ACLs and the authorizer that checks them, as Kafka's StandardAuthorizer does.

`model` names what an ACL is made of (Kafka's codes), `index` keeps the ACLs of a broker
by resource so that a check looks at only those that may match, `authorizer` decides
(super users, deny before allow, operations that imply others, the default when no ACL
is found) and `records` makes ACLs durable records of the log. All of it is pure: the
request layer (`server/requests/access.py`) says which operation each API needs.
"""
