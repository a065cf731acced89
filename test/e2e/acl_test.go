package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// The users of the ACL tests, PLAIN users of the broker's one listener:
// admin is a super user; alice and bob get only what ACLs grant.
var aclUsers = map[string]string{"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}

// startACLBroker starts a broker whose one listener is SASL_PLAINTEXT with
// the ACL authorizer on, super.users=User:admin and nothing allowed to a
// resource no ACL names.
func startACLBroker(t *testing.T, dir string) *Broker {
	t.Helper()
	jaas := "org.apache.kafka.common.security.plain.PlainLoginModule required"
	for _, u := range []string{"admin", "alice", "bob"} {
		jaas += fmt.Sprintf(` user_%s="%s"`, u, aclUsers[u])
	}
	return startBrokerListeners(t, dir, []string{"SASL_PLAINTEXT"},
		"sasl.enabled.mechanisms=PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config="+jaas+";",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin",
	)
}

// as is a client authenticated as user, with opts.
func as(t *testing.T, b *Broker, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, b.Addr, append([]kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: aclUsers[user]}.AsMechanism())}, opts...)...)
}

func adminAs(t *testing.T, b *Broker, user string) *kadm.Client {
	t.Helper()
	adm := kadm.NewClient(as(t, b, user))
	adm.SetTimeoutMillis(10_000)
	return adm
}

func createACLs(t *testing.T, adm *kadm.Client, b *kadm.ACLBuilder) {
	t.Helper()
	res, err := adm.CreateACLs(testContext(t, 15*time.Second), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("creating %s %s on %s: %v (%s)", r.Principal, r.Operation, r.Name, r.Err, r.ErrMessage)
		}
	}
}

// produceErr is the error of producing one record to topic as user.
func produceErr(t *testing.T, cl *kgo.Client, topic string) error {
	t.Helper()
	return cl.ProduceSync(testContext(t, 15*time.Second), &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
}

func TestACLsGrantAndRevoke(t *testing.T) {
	t.Parallel()
	b := startACLBroker(t, t.TempDir())
	admin := adminAs(t, b, "admin")
	for _, topic := range []string{"orders", "orders-eu", "secret"} {
		createTopic(t, admin, topic, 1, nil)
	}
	ctx := testContext(t, 60*time.Second)

	// Nothing is granted yet: alice sees no topic, may not write.
	alice := as(t, b, "alice", kgo.RetryTimeout(2*time.Second))
	if err := produceErr(t, alice, "orders"); !errors.Is(err, kerr.TopicAuthorizationFailed) && !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("alice's produce before any ACL: %v", err)
	}
	if topics := listedTopics(t, adminAs(t, b, "alice")); len(topics) != 0 {
		t.Fatalf("alice sees %v before any ACL", topics)
	}

	// WRITE on orders (literal), READ on every topic starting with
	// "orders" (prefixed), READ on group g1; a DENY on orders-eu wins over
	// the prefixed READ.
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpWrite))
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead))
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice").Groups("g1").Operations(kadm.OpRead))
	createACLs(t, admin, kadm.NewACLs().Deny("User:alice").Topics("orders-eu").Operations(kadm.OpRead))

	alice = as(t, b, "alice")
	produceSync(t, alice, &kgo.Record{Topic: "orders", Value: []byte("first")})
	// READ implies DESCRIBE, and a DENY of READ does not deny DESCRIBE
	// (Kafka's rule): alice sees both orders topics, not secret.
	if got := listedTopics(t, adminAs(t, b, "alice")); !slices.Equal(got, []string{"orders", "orders-eu"}) {
		t.Fatalf("alice sees %v, want [orders orders-eu]", got)
	}
	consumer := as(t, b, "alice", kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("g1"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fetches := consumer.PollFetches(ctx)
	if errs := fetches.Errors(); len(errs) > 0 || fetches.NumRecords() != 1 {
		t.Fatalf("alice consuming orders in g1: %d records, errors %v", fetches.NumRecords(), errs)
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("alice committing g1's offsets: %v", err)
	}

	// Her authorized operations on g1: READ, and DESCRIBE which it implies.
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups, dg.IncludeAuthorizedOperations = []string{"g1"}, true
	described, err := dg.RequestWith(ctx, as(t, b, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := described.Groups[0].AuthorizedOperations, int32(1<<3|1<<8); described.Groups[0].ErrorCode != 0 || got != want {
		t.Fatalf("alice's authorized operations on g1: %b (error %d), want %b", got, described.Groups[0].ErrorCode, want)
	}

	// Offsets of g1 on a topic alice may not describe are hidden from her.
	var secretOffsets kadm.Offsets
	secretOffsets.Add(kadm.Offset{Topic: "secret", Partition: 0, At: 0, LeaderEpoch: -1})
	if _, err := admin.CommitOffsets(ctx, "g1", secretOffsets); err != nil {
		t.Fatalf("admin committing g1's offset on secret: %v", err)
	}
	fetched, err := adminAs(t, b, "alice").FetchOffsets(ctx, "g1")
	if err != nil {
		t.Fatalf("alice fetching g1's offsets: %v", err)
	}
	if _, ok := fetched.Lookup("secret", 0); ok {
		t.Fatal("alice sees g1's offset on secret, a topic she may not describe")
	}
	if o, ok := fetched.Lookup("orders", 0); !ok || o.At != 1 {
		t.Fatalf("alice's committed offset on orders: %+v, %v", o, ok)
	}

	// What alice may not do.
	if err := produceErr(t, as(t, b, "alice", kgo.RetryTimeout(2*time.Second)), "secret"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice writing secret: %v", err)
	}
	ro := as(t, b, "alice", kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders-eu": {0: kgo.NewOffset().AtStart()}}))
	if err := firstFetchErr(t, ro); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice reading orders-eu: %v", err)
	}
	aliceAdm := adminAs(t, b, "alice")
	if _, err := aliceAdm.CreateTopic(ctx, 1, 1, nil, "alice-topic"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice creating a topic: %v", err)
	}
	if resp := describeAllACLs(t, as(t, b, "alice")); resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice describing ACLs: error %d", resp.ErrorCode)
	}
	if res, err := aliceAdm.DeleteTopics(ctx, "orders"); err == nil && !errors.Is(res["orders"].Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice deleting orders: %v", res["orders"].Err)
	}

	// bob has no ACL at all: an idempotent producer cannot even get a
	// producer id (IDEMPOTENT_WRITE on the cluster or WRITE on some topic).
	if err := produceErr(t, as(t, b, "bob", kgo.RetryTimeout(2*time.Second)), "orders"); !errors.Is(err, kerr.ClusterAuthorizationFailed) && !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob's produce: %v", err)
	}
	// ... nor join alice's group.
	if _, err := adminAs(t, b, "bob").FetchOffsets(ctx, "g1"); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("bob fetching g1's offsets: %v", err)
	}

	// The ACLs as DescribeAcls lists them, then alice's WRITE revoked.
	listed := describeAllACLs(t, as(t, b, "admin"))
	if n := countDescribed(listed); listed.ErrorCode != 0 || n != 4 {
		t.Fatalf("DescribeAcls: error %d, %d ACLs, want 4: %+v", listed.ErrorCode, n, listed.Resources)
	}
	deleted, err := admin.DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").Operations(kadm.OpWrite))
	if err != nil {
		t.Fatal(err)
	}
	if n := countDeleted(deleted); n != 1 {
		t.Fatalf("DeleteAcls deleted %d ACLs, want 1: %+v", n, deleted)
	}
	if err := produceErr(t, as(t, b, "alice", kgo.RetryTimeout(2*time.Second)), "orders"); err == nil {
		t.Fatal("alice still writes to orders after her WRITE was deleted")
	}
}

// TestACLsSurviveKill: ACLs live in the metadata quorum; a kill -9 and a
// restart keep them.
func TestACLsSurviveKill(t *testing.T) {
	t.Parallel()
	b := startACLBroker(t, t.TempDir())
	admin := adminAs(t, b, "admin")
	createTopic(t, admin, "kept", 1, nil)
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice").Topics("kept").Operations(kadm.OpWrite, kadm.OpRead))
	b.Kill()
	b.Restart()
	produceSync(t, as(t, b, "alice"), &kgo.Record{Topic: "kept", Value: []byte("after restart")})
	if err := produceErr(t, as(t, b, "bob", kgo.RetryTimeout(2*time.Second)), "kept"); err == nil {
		t.Fatal("bob writes to kept after the restart")
	}
}

// TestACLsWithoutAuthorizer: the ACL requests answer SECURITY_DISABLED,
// as a Kafka broker without authorizer.class.name does.
func TestACLsWithoutAuthorizer(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	if resp := describeAllACLs(t, newClient(t, b.Addr)); resp.ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("DescribeAcls without an authorizer: error %d, want SECURITY_DISABLED", resp.ErrorCode)
	}
}

func listedTopics(t *testing.T, adm *kadm.Client) []string {
	t.Helper()
	details, err := adm.ListTopics(testContext(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return details.Names()
}

// firstFetchErr polls cl until a fetch error arrives.
func firstFetchErr(t *testing.T, cl *kgo.Client) error {
	t.Helper()
	ctx := testContext(t, 15*time.Second)
	for ctx.Err() == nil {
		if errs := cl.PollFetches(ctx).Errors(); len(errs) > 0 {
			return errs[0].Err
		}
	}
	return ctx.Err()
}

// describeAllACLs asks for every ACL (a filter of ANY values).
func describeAllACLs(t *testing.T, cl *kgo.Client) *kmsg.DescribeACLsResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(testContext(t, 10*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func countDescribed(resp *kmsg.DescribeACLsResponse) int {
	n := 0
	for _, r := range resp.Resources {
		n += len(r.ACLs)
	}
	return n
}

func countDeleted(rs kadm.DeleteACLsResults) int {
	n := 0
	for _, r := range rs {
		n += len(r.Deleted)
	}
	return n
}

// TestACLsTransactions: a transactional producer needs WRITE on its
// transactional id and on every topic it adds to the transaction.
func TestACLsTransactions(t *testing.T) {
	t.Parallel()
	b := startACLBroker(t, t.TempDir())
	admin := adminAs(t, b, "admin")
	createTopic(t, admin, "payments", 1, nil)
	createTopic(t, admin, "secret", 1, nil)
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice", "User:bob").Topics("payments").Operations(kadm.OpWrite))
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice").TransactionalIDs("tx-alice").Operations(kadm.OpWrite))
	ctx := testContext(t, 60*time.Second)

	alice := as(t, b, "alice", kgo.TransactionalID("tx-alice"), kgo.RetryTimeout(5*time.Second))
	if err := alice.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceSync(t, alice, &kgo.Record{Topic: "payments", Value: []byte("paid")})
	if err := alice.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("alice committing: %v", err)
	}

	// A topic she may not write cannot join her transaction.
	if err := alice.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := produceErr(t, alice, "secret"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice adding secret to her transaction: %v", err)
	}
	_ = alice.EndTransaction(ctx, kgo.TryAbort)

	// bob may write payments, but not as a transactional producer without
	// WRITE on his transactional id.
	// franz-go asks for the producer id when the transaction begins.
	bob := as(t, b, "bob", kgo.TransactionalID("tx-bob"), kgo.RetryTimeout(2*time.Second))
	err := bob.BeginTransaction()
	if err == nil {
		err = produceErr(t, bob, "payments")
	}
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("bob's transaction: %v", err)
	}
}

// TestACLsKcat: kcat (librdkafka) produces, consumes and lists what its
// ACLs allow, and is refused a topic they do not.
func TestACLsKcat(t *testing.T) {
	t.Parallel()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not on PATH (CI installs it: apt-get install kcat)")
	}
	b := startACLBroker(t, t.TempDir())
	admin := adminAs(t, b, "admin")
	createTopic(t, admin, "open", 1, nil)
	createTopic(t, admin, "secret", 1, nil)
	createACLs(t, admin, kadm.NewACLs().Allow("User:alice").Topics("open").Operations(kadm.OpWrite, kadm.OpRead))

	props := filepath.Join(t.TempDir(), "kcat.properties")
	conf := fmt.Sprintf("security.protocol=SASL_PLAINTEXT\nsasl.mechanisms=PLAIN\nsasl.username=alice\nsasl.password=%s\n", aclUsers["alice"])
	if err := os.WriteFile(props, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "kcat_test.sh", b.Addr, "open")
	cmd.Env = append(cmd.Environ(), "KCAT="+kcat, "KCAT_CONFIG="+props)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "kcat e2e: ok") {
		t.Fatalf("kcat_test.sh as alice on open: %v\n%s", err, out)
	}

	produce := exec.CommandContext(ctx, kcat, "-P", "-b", b.Addr, "-F", props, "-t", "secret", "-X", "message.timeout.ms=10000")
	produce.Stdin = strings.NewReader("nope\n")
	out, err := produce.CombinedOutput()
	if err == nil && !strings.Contains(string(out), "authorization failed") {
		t.Fatalf("kcat as alice wrote to secret:\n%s", out)
	}
	if !strings.Contains(strings.ToLower(string(out)), "authorization failed") {
		t.Fatalf("kcat's error does not say the authorization failed:\n%s", out)
	}
}

// TestACLsForCertificatePrincipals: a TLS client certificate is the
// principal on an SSL listener, named by ssl.principal.mapping.rules.
func TestACLsForCertificatePrincipals(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t, t.TempDir())
	jaas := fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="%s";`, aclUsers["admin"])
	b := startBrokerListeners(t, t.TempDir(), []string{"SASL_PLAINTEXT", "SSL"},
		"sasl.enabled.mechanisms=PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config="+jaas,
		"ssl.keystore.location="+pki.KeystoreFile,
		"ssl.truststore.location="+pki.CAFile,
		"ssl.client.auth=required",
		`ssl.principal.mapping.rules=RULE:^CN=([a-z]+)$/$1-app/U,DEFAULT`,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin",
	)
	admin := adminAs(t, b, "admin")
	createTopic(t, admin, "tls-allowed", 1, nil)
	createTopic(t, admin, "tls-denied", 1, nil)
	// The test certificate's subject is CN=client: the rule names it CLIENT-APP.
	createACLs(t, admin, kadm.NewACLs().Allow("User:CLIENT-APP").Topics("tls-allowed").Operations(kadm.OpWrite))

	client := newClient(t, b.Listeners["SSL"], tlsOpt(pki.clientTLS(true)), kgo.RetryTimeout(2*time.Second))
	produceSync(t, client, &kgo.Record{Topic: "tls-allowed", Value: []byte("by certificate")})
	if err := produceErr(t, client, "tls-denied"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("the certificate's principal writing tls-denied: %v", err)
	}
}
