// Package acl is Kafka's ACL vocabulary and its authorizer decision, after
// Apache Kafka's StandardAuthorizer (KRaft) and AclAuthorizer (ZooKeeper). It
// is pure: no I/O, no goroutines, no clock, no package state. The metadata
// layer stores Bindings, the api layer validates CreateAcls bindings and
// DescribeAcls/DeleteAcls filters with it, and the request path asks an
// Authorizer about an Index built once per set of bindings.
//
// Vocabulary. ResourceType, PatternType, Operation and Permission carry
// Kafka's wire codes; String gives Kafka's names, and, like Kafka's fromCode,
// a code Kafka does not know is UNKNOWN. A stored Binding has a concrete
// resource type (TOPIC..USER), a LITERAL or PREFIXED pattern, a concrete
// operation (ALL..DESCRIBE_TOKENS) and ALLOW or DENY. The resource name "*"
// with the LITERAL pattern is the wildcard resource, the host "*" is any
// host, and the principal "User:*" is any principal (whatever its type, as in
// Kafka).
//
// Gateways (STYLE §7). Binding.Validate is CreateAcls' check, Filter.Validate
// that of DescribeAcls and DeleteAcls; both answer *Error whose Message is
// the error_message to send with INVALID_REQUEST, in Kafka's words where
// Kafka has them. Binding.Validate is stricter than a Kafka broker in three
// ways, on purpose (a typo fails at creation instead of granting nothing):
// it refuses a principal with an empty type or name, an empty host, and an
// operation that does not apply to the resource type (kafka-acls.sh's
// table, AclEntry.supportedOperations, plus ALL).
//
// Contract of Authorize (each line is a test; Kafka's findAclRule):
//   - A super user (exact principal string in SuperUsers) is allowed
//     everything, whatever the bindings say.
//   - A binding matches the resource (rt, name) when it has type rt and is
//     LITERAL name, LITERAL "*", or PREFIXED with a prefix of name.
//   - A matching binding applies to the request when its principal is the
//     requester's or "User:*", its host is the requester's or "*", and its
//     operation is ALL or the requested one; an ALLOW also applies to DESCRIBE
//     when it is for READ, WRITE, DELETE or ALTER, and to DESCRIBE_CONFIGS
//     when it is for ALTER_CONFIGS. A DENY never implies: DENY READ does not
//     deny DESCRIBE.
//   - An applying DENY denies; otherwise an applying ALLOW allows; otherwise,
//     if some binding matches the resource (for any principal, host or
//     operation) the request is denied; otherwise AllowEveryoneIfNoACL
//     decides (allow.everyone.if.no.acl.found).
//   - Adding a DENY never allows a denied request. Adding an ALLOW never
//     denies an allowed request, except one allowed by the no-ACL default:
//     an ALLOW that matches the resource but does not apply to the request
//     takes the resource out of the default.
//
// Contract of AuthorizeAny (KIP-679's authorizeByResourceType): is there a
// name N such that Authorize(.., rt, N) is true? It answers that exactly,
// assuming, as Kafka does, that prefixes never cover every possible name:
//   - A super user is allowed.
//   - Only bindings of type rt that apply to the request (principal, host and
//     operation, with the implications above) are considered.
//   - An applying DENY on LITERAL "*" denies.
//   - An applying ALLOW on LITERAL "*" allows (some name escapes every DENY).
//   - An applying ALLOW on LITERAL L allows unless an applying DENY is on
//     LITERAL L or PREFIXED with a prefix of L.
//   - An applying ALLOW on PREFIXED P allows unless an applying DENY is
//     PREFIXED with a prefix of P (a DENY on one literal or a longer prefix
//     leaves other names under P allowed).
//   - Otherwise, AllowEveryoneIfNoACL allows when some name has no binding at
//     all, that is when there is no LITERAL "*" binding of type rt.
//
// Kafka differs in two corners, and we take the exact answer: its default
// implementation (used by StandardAuthorizer) probes the made-up name
// "hardcode" for implied operations and the no-ACL default, so its answer
// depends on whether some binding happens to cover "hardcode"; AclAuthorizer
// applies allow.everyone.if.no.acl.found even when a wildcard binding for
// another principal covers every name.
//
// Index holds a fixed set of bindings (duplicates collapse) by resource type,
// then by LITERAL name and by prefix, then by principal, so that a decision
// reads only the bindings of the requester and of "User:*" that can match
// the resource: Authorize costs a map lookup per distinct prefix length no
// longer than the name, plus the bindings it reads. An Index is immutable
// and safe for concurrent use; a nil *Index holds no bindings.
//
// Programmer errors panic (STYLE §8): NewIndex with a binding that cannot be
// stored (a resource type, pattern type, operation or permission that is
// UNKNOWN, ANY or MATCH), and Authorize or AuthorizeAny asked about an
// UNKNOWN or ANY operation or resource type.
package acl
