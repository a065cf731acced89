package api

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// The codes a refused request gets, by the kind of resource refused.
var (
	topicDenied   = kerr.TopicAuthorizationFailed.Code
	groupDenied   = kerr.GroupAuthorizationFailed.Code
	clusterDenied = kerr.ClusterAuthorizationFailed.Code
	txnDenied     = kerr.TransactionalIDAuthorizationFailed.Code
)

// newPolicy is the ACL authorizer of cfg, nil when authorizer.class.name
// is unset: then every request is allowed, as in a Kafka broker without an
// authorizer.
func newPolicy(cfg *config.Broker) *acl.Authorizer {
	if !cfg.Authorizer {
		return nil
	}
	super := make(map[string]bool, len(cfg.SuperUsers))
	for _, p := range cfg.SuperUsers {
		super[p] = true
	}
	return &acl.Authorizer{SuperUsers: super, AllowEveryoneIfNoACL: cfg.AllowEveryoneIfNoACL}
}

// allowed reports whether req's principal, from its host, may perform op
// on the resource (rt, name), under the ACLs of the current image.
func (h *Handler) allowed(req *Request, op acl.Operation, rt acl.ResourceType, name string) bool {
	if h.policy == nil {
		return true
	}
	return h.policy.Authorize(h.opts.Meta.Image().AclIndex(), req.Principal, aclHost(req), op, rt, name)
}

func (h *Handler) allowedTopic(req *Request, op acl.Operation, topic string) bool {
	return h.allowed(req, op, acl.ResourceTopic, topic)
}

func (h *Handler) allowedGroup(req *Request, op acl.Operation, group string) bool {
	return h.allowed(req, op, acl.ResourceGroup, group)
}

func (h *Handler) allowedTxn(req *Request, op acl.Operation, transactionalID string) bool {
	return h.allowed(req, op, acl.ResourceTransactionalID, transactionalID)
}

func (h *Handler) allowedCluster(req *Request, op acl.Operation) bool {
	return h.allowed(req, op, acl.ResourceCluster, acl.ClusterName)
}

// allowedOnSomeTopic is KIP-679's check: may req's principal perform op on
// at least one topic (an idempotent producer with WRITE on a topic needs no
// IDEMPOTENT_WRITE on the cluster).
func (h *Handler) allowedOnSomeTopic(req *Request, op acl.Operation) bool {
	if h.policy == nil {
		return true
	}
	return h.policy.AuthorizeAny(h.opts.Meta.Image().AclIndex(), req.Principal, aclHost(req), op, acl.ResourceTopic)
}

// aclHost is the client's address as ACLs name hosts (an IP, no slash).
func aclHost(req *Request) string { return strings.TrimPrefix(req.ClientHost, "/") }

// topicName is the name a request's topic is authorized by: the topic's,
// or the name the request gives when there is no such topic (a request by
// an unknown topic id names "", which no ACL but a wildcard matches).
func topicName(requested string, t *metadata.Topic) string {
	if t != nil {
		return t.Name
	}
	return requested
}

// supportedOps are the operations Kafka reports per resource type in
// authorized-operations bit fields (Metadata, DescribeCluster).
var supportedOps = map[acl.ResourceType][]acl.Operation{
	acl.ResourceTopic: {acl.OpRead, acl.OpWrite, acl.OpCreate, acl.OpDelete, acl.OpAlter, acl.OpDescribe,
		acl.OpDescribeConfigs, acl.OpAlterConfigs},
	acl.ResourceCluster: {acl.OpCreate, acl.OpClusterAction, acl.OpDescribeConfigs, acl.OpAlterConfigs,
		acl.OpIdempotentWrite, acl.OpAlter, acl.OpDescribe},
	acl.ResourceGroup: {acl.OpRead, acl.OpDelete, acl.OpDescribe},
}

// authorizedOps is the bit field (1 << operation code) of what req's
// principal may do to the resource: every supported operation without an
// authorizer, as in Kafka.
func (h *Handler) authorizedOps(req *Request, rt acl.ResourceType, name string) int32 {
	var bits int32
	for _, op := range supportedOps[rt] {
		if h.allowed(req, op, rt, name) {
			bits |= 1 << op
		}
	}
	return bits
}

// deniedTopics are those of topics on which req's principal may not
// perform op; nil when none is (always, without an authorizer).
func (h *Handler) deniedTopics(req *Request, op acl.Operation, topics []string) map[string]bool {
	if h.policy == nil {
		return nil
	}
	var out map[string]bool
	for _, t := range topics {
		if !h.allowedTopic(req, op, t) {
			if out == nil {
				out = map[string]bool{}
			}
			out[t] = true
		}
	}
	return out
}

// afterReply runs edit on a reply's response once it is there (now or
// after Wait).
func afterReply(r Reply, edit func(kmsg.Response)) Reply {
	if r.Wait == nil {
		if r.Resp != nil {
			edit(r.Resp)
		}
		return r
	}
	wait := r.Wait
	r.Wait = func() kmsg.Response {
		resp := wait()
		edit(resp)
		return resp
	}
	return r
}

// offsetDeleteTopics are the topics an OffsetDelete names.
func offsetDeleteTopics(r *kmsg.OffsetDeleteRequest) []string {
	out := make([]string, len(r.Topics))
	for i, t := range r.Topics {
		out[i] = t.Topic
	}
	return out
}
