import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DeletedRecords;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * StrataCheck drives the Java client (kafka-clients, the reference Kafka
 * client) against one broker, unchanged, through one scenario:
 *
 * <pre>java -cp ... StrataCheck BOOTSTRAP produce-consume|group|admin|compacted|transactions</pre>
 *
 * It prints "OK scenario: summary" and exits 0, or prints one line
 * "FAIL scenario: what was wrong" and exits 1 (2 on a bad command line, 3 when
 * the scenario overruns its deadline). Every wait is bounded so that a broker
 * that stops answering fails the run instead of hanging it.
 */
public final class StrataCheck {
    /** Each scenario must finish within this, the client's own timeouts included. */
    private static final Duration SCENARIO_DEADLINE = Duration.ofSeconds(55);
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final long FUTURE_TIMEOUT_SECONDS = 20;

    private final String bootstrap;

    private StrataCheck(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    public static void main(String[] args) {
        if (args.length != 2) {
            System.out.println("FAIL usage: StrataCheck BOOTSTRAP produce-consume|group|admin|compacted|transactions");
            System.exit(2);
        }
        String scenario = args[1];
        startWatchdog(scenario);
        StrataCheck check = new StrataCheck(args[0]);
        try {
            String summary;
            switch (scenario) {
                case "produce-consume" -> summary = check.produceConsume();
                case "group" -> summary = check.group("classic");
                case "consumer-protocol-group" -> summary = check.group("consumer");
                case "admin" -> summary = check.adminScenario();
                case "compacted" -> summary = check.compacted();
                case "transactions" -> summary = check.transactions();
                default -> {
                    System.out.println("FAIL unknown scenario " + scenario);
                    System.exit(2);
                    return;
                }
            }
            System.out.println("OK " + scenario + ": " + summary);
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace(System.err);
            System.out.println("FAIL " + scenario + ": " + describe(e));
            System.out.flush();
            System.exit(1);
        }
    }

    /** Ends the process if the scenario overruns, whatever the client is doing. */
    private static void startWatchdog(String scenario) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(SCENARIO_DEADLINE.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("FAIL " + scenario + ": not done within " + SCENARIO_DEADLINE.toSeconds() + " s");
            System.out.flush();
            Runtime.getRuntime().halt(3);
        }, "strata-check-watchdog");
        t.setDaemon(true);
        t.start();
    }

    /** One line for a failure: unwraps ExecutionException to the broker's answer. */
    private static String describe(Throwable e) {
        Throwable cause = e;
        while ((cause instanceof ExecutionException || cause instanceof RuntimeException && !(cause instanceof CheckFailed))
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        String msg = cause instanceof CheckFailed ? cause.getMessage()
                : cause.getClass().getName() + ": " + cause.getMessage();
        if (cause != e && !(cause instanceof CheckFailed)) {
            msg = msg + " (in " + e.getMessage() + ")";
        }
        return msg.replace('\n', ' ');
    }

    /** A check of ours that failed, as opposed to an exception from the client. */
    private static final class CheckFailed extends RuntimeException {
        CheckFailed(String message) {
            super(message);
        }
    }

    private static void check(boolean ok, String format, Object... args) {
        if (!ok) {
            throw new CheckFailed(String.format(format, args));
        }
    }

    private static <T> T get(Future<T> f, String what) throws Exception {
        try {
            return f.get(FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new RuntimeException(what, e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new CheckFailed(what + ": no answer within " + FUTURE_TIMEOUT_SECONDS + " s");
        }
    }

    /** Polls cond every 100 ms until it holds or d has passed. */
    private static void waitFor(Duration d, String what, BooleanSupplier cond) throws InterruptedException {
        waitFor(d, () -> what, cond);
    }

    /** waitFor with a description built when the wait times out, to show the state then. */
    private static void waitFor(Duration d, Supplier<String> what, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + d.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new CheckFailed("timed out after " + d.toSeconds() + " s waiting for " + what.get());
            }
            Thread.sleep(100);
        }
    }

    // ---- clients ----

    private Properties common() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, 100);
        p.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1_000);
        p.put(AdminClientConfig.METADATA_MAX_AGE_CONFIG, 5_000);
        return p;
    }

    private Admin admin() {
        Properties p = common();
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "strata-check-admin");
        return Admin.create(p);
    }

    private KafkaProducer<byte[], byte[]> producer(String compression) {
        Properties p = common();
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "strata-check-producer-" + compression);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private KafkaConsumer<byte[], byte[]> consumer(String groupId, String clientId) {
        return consumer(groupId, clientId, "classic");
    }

    /**
     * A consumer of groupId (null: none) speaking protocol: classic, or
     * consumer (KIP-848), where the broker sets the session and heartbeat.
     */
    private KafkaConsumer<byte[], byte[]> consumer(String groupId, String clientId, String protocol) {
        Properties p = common();
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        if (groupId != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            if (protocol.equals("classic")) {
                p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
                p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000);
            }
            p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 30_000);
        }
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 200);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static void createTopic(Admin admin, String topic, int partitions, Map<String, String> configs) throws Exception {
        NewTopic nt = new NewTopic(topic, partitions, (short) 1).configs(configs);
        get(admin.createTopics(List.of(nt)).all(), "createTopics " + topic);
        waitForPartitions(admin, topic, partitions);
    }

    /** Waits until Metadata shows topic with exactly n partitions. */
    private static void waitForPartitions(Admin admin, String topic, int n) throws InterruptedException {
        waitFor(WAIT, topic + " to have " + n + " partitions in metadata", () -> {
            try {
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
                        .get(FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS).get(topic);
                return d != null && d.partitions().size() == n;
            } catch (Exception e) {
                return false;
            }
        });
    }

    private static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    private static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    private static String where(TopicPartition tp, long offset) {
        return tp + "@" + offset;
    }

    // ---- scenario produce-consume ----

    /** What was sent, to be compared field by field with what is read back. */
    private record Sent(String key, String value, long timestamp, List<Header> headers) {
    }

    private static final List<String> COMPRESSIONS = List.of("none", "gzip", "snappy", "lz4", "zstd");
    private static final int RECORDS_PER_COMPRESSION = 300;

    private String produceConsume() throws Exception {
        String topic = "java-produce-consume";
        try (Admin admin = admin()) {
            createTopic(admin, topic, 3, Map.of("retention.ms", "86400000", "cleanup.policy", "delete"));
            Config cfg = get(admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, topic)))
                    .all(), "describeConfigs").values().iterator().next();
            ConfigEntry retention = cfg.get("retention.ms");
            check(retention != null && "86400000".equals(retention.value()),
                    "topic config retention.ms: got %s, want 86400000 as created", retention);
        }

        Map<String, Sent> sent = new HashMap<>(); // by where(tp, offset)
        long base = System.currentTimeMillis() - 10 * 60 * 1000;
        for (String compression : COMPRESSIONS) {
            try (KafkaProducer<byte[], byte[]> producer = producer(compression)) {
                List<Future<RecordMetadata>> futures = new ArrayList<>();
                List<Sent> batch = new ArrayList<>();
                for (int i = 0; i < RECORDS_PER_COMPRESSION; i++) {
                    String key = i % 37 == 36 ? null : compression + "-k" + i;
                    // Values repeat so that every codec has something to squeeze;
                    // every 50th is a tombstone, every 97th spans several KiB.
                    String value = i % 50 == 49 ? null
                            : (compression + "-v" + i + "|").repeat(i % 97 == 0 ? 400 : 1 + i % 7);
                    long ts = base + i;
                    List<Header> headers = new ArrayList<>();
                    headers.add(new RecordHeader("codec", bytes(compression)));
                    headers.add(new RecordHeader("seq", bytes(Integer.toString(i))));
                    if (i % 5 == 0) {
                        headers.add(new RecordHeader("null-header", (byte[]) null));
                    }
                    if (i % 11 == 0) {
                        headers.add(new RecordHeader("seq", bytes("dup-" + i))); // repeated keys keep their order
                    }
                    Sent s = new Sent(key, value, ts, headers);
                    batch.add(s);
                    futures.add(producer.send(new ProducerRecord<>(topic, null, ts, bytes(key), bytes(value), headers)));
                }
                producer.flush();
                for (int i = 0; i < futures.size(); i++) {
                    RecordMetadata md = get(futures.get(i), "send " + compression + " #" + i);
                    Sent s = batch.get(i);
                    check(md.hasOffset() && md.offset() >= 0, "%s #%d: no offset in the produce answer", compression, i);
                    check(md.timestamp() == s.timestamp(), "%s #%d: metadata timestamp %d, sent %d (CreateTime)",
                            compression, i, md.timestamp(), s.timestamp());
                    TopicPartition tp = new TopicPartition(md.topic(), md.partition());
                    Sent prev = sent.put(where(tp, md.offset()), s);
                    check(prev == null, "%s #%d: offset %s was already given to another record", compression, i,
                            where(tp, md.offset()));
                }
            }
        }

        int total = COMPRESSIONS.size() * RECORDS_PER_COMPRESSION;
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1),
                new TopicPartition(topic, 2));
        Map<String, ConsumerRecord<byte[], byte[]>> got = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(null, "strata-check-assign")) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, WAIT);
            long endSum = end.values().stream().mapToLong(Long::longValue).sum();
            check(endSum == total, "end offsets %s sum to %d, sent %d records", end, endSum, total);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (got.size() < total) {
                check(System.nanoTime() < deadline, "read %d of %d records within %d s", got.size(), total,
                        WAIT.toSeconds());
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    String at = where(new TopicPartition(r.topic(), r.partition()), r.offset());
                    check(got.put(at, r) == null, "record %s read twice", at);
                }
            }
        }

        for (Map.Entry<String, Sent> e : sent.entrySet()) {
            ConsumerRecord<byte[], byte[]> r = got.get(e.getKey());
            check(r != null, "record %s was acknowledged but not read back", e.getKey());
            Sent s = e.getValue();
            check(java.util.Objects.equals(str(r.key()), s.key()), "%s: key %s, sent %s", e.getKey(), str(r.key()), s.key());
            check(java.util.Objects.equals(str(r.value()), s.value()), "%s: value %.40s, sent %.40s", e.getKey(),
                    str(r.value()), s.value());
            check(r.timestamp() == s.timestamp() && r.timestampType() == TimestampType.CREATE_TIME,
                    "%s: timestamp %d %s, sent %d CreateTime", e.getKey(), r.timestamp(), r.timestampType(), s.timestamp());
            Header[] hs = r.headers().toArray();
            check(hs.length == s.headers().size(), "%s: %d headers, sent %d", e.getKey(), hs.length, s.headers().size());
            for (int i = 0; i < hs.length; i++) {
                Header want = s.headers().get(i);
                check(hs[i].key().equals(want.key()) && Arrays.equals(hs[i].value(), want.value()),
                        "%s: header %d is %s=%s, sent %s=%s", e.getKey(), i, hs[i].key(), str(hs[i].value()),
                        want.key(), str(want.value()));
            }
        }
        check(got.size() == sent.size(), "read %d records, %d were acknowledged", got.size(), sent.size());
        return total + " records over " + COMPRESSIONS + " produced idempotently (acks=all) and read back intact";
    }

    // ---- scenario group ----

    private static final int GROUP_PARTITIONS = 6;
    private static final int RECORDS_PER_PARTITION_PER_PHASE = 50;

    /** One group member, owned by one thread: KafkaConsumer is not thread-safe. */
    private final class Member implements Runnable, ConsumerRebalanceListener {
        final String name;
        final String groupId;
        final String protocol; // group.protocol: classic, or consumer (KIP-848)
        final String topic;
        final Map<String, String> seen; // where(tp, offset) -> member name, shared by all members
        final List<String> errors;
        final AtomicReference<Set<TopicPartition>> assignment = new AtomicReference<>(Set.of());
        final AtomicBoolean stop = new AtomicBoolean();
        volatile int generations;
        volatile long read;
        volatile Throwable failure;
        KafkaConsumer<byte[], byte[]> consumer;
        final Thread thread;

        Member(String name, String groupId, String protocol, String topic, Map<String, String> seen, List<String> errors) {
            this.name = name;
            this.groupId = groupId;
            this.protocol = protocol;
            this.topic = topic;
            this.seen = seen;
            this.errors = errors;
            this.thread = new Thread(this, "member-" + name);
        }

        @Override
        public void run() {
            try {
                consumer = consumer(groupId, "strata-check-" + name, protocol);
                consumer.subscribe(List.of(topic), this);
                while (!stop.get()) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                        String at = where(tp, r.offset());
                        if (!assignment.get().contains(tp)) {
                            errors.add(name + " read " + at + " outside its assignment " + assignment.get());
                        }
                        String want = "p" + r.partition() + "-o" + r.offset();
                        if (!want.equals(str(r.value()))) {
                            errors.add(name + " read " + at + " with value " + str(r.value()) + ", want " + want);
                        }
                        String other = seen.putIfAbsent(at, name);
                        if (other != null) {
                            errors.add(at + " read by " + other + " and again by " + name);
                        }
                        read++;
                    }
                    if (!records.isEmpty()) {
                        try {
                            consumer.commitSync(Duration.ofSeconds(10));
                        } catch (RebalanceInProgressException e) {
                            // The group is rebalancing: the next poll rejoins, and
                            // onPartitionsRevoked commits these offsets first.
                        }
                    }
                }
                consumer.commitSync(Duration.ofSeconds(10));
            } catch (Throwable e) {
                failure = e;
            } finally {
                if (consumer != null) {
                    consumer.close(Duration.ofSeconds(10));
                }
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            // Commit what was read before giving partitions away, so that the
            // next owner starts right after it: the at-most-once half of
            // "exactly once across members".
            if (!partitions.isEmpty()) {
                consumer.commitSync(Duration.ofSeconds(10));
            }
            Set<TopicPartition> now = new HashSet<>(assignment.get());
            now.removeAll(partitions);
            assignment.set(Set.copyOf(now));
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            Set<TopicPartition> now = new HashSet<>(assignment.get());
            now.addAll(partitions);
            assignment.set(Set.copyOf(now));
            generations++;
        }

        void stopAndJoin() throws InterruptedException {
            stop.set(true);
            thread.join(20_000);
            check(!thread.isAlive(), "%s did not stop within 20 s", name);
            if (failure != null) {
                throw new RuntimeException(name + " failed", failure);
            }
        }
    }

    private void produceGroupPhase(String topic, int phase) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer("lz4")) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int p = 0; p < GROUP_PARTITIONS; p++) {
                for (int i = 0; i < RECORDS_PER_PARTITION_PER_PHASE; i++) {
                    long offset = (long) phase * RECORDS_PER_PARTITION_PER_PHASE + i;
                    futures.add(producer.send(new ProducerRecord<>(topic, p, null, bytes("k" + i),
                            bytes("p" + p + "-o" + offset))));
                }
            }
            producer.flush();
            int i = 0;
            for (Future<RecordMetadata> f : futures) {
                RecordMetadata md = get(f, "send phase " + phase);
                long want = (long) phase * RECORDS_PER_PARTITION_PER_PHASE + (i % RECORDS_PER_PARTITION_PER_PHASE);
                check(md.offset() == want, "phase %d: record %d went to offset %d of partition %d, want %d",
                        phase, i, md.offset(), md.partition(), want);
                i++;
            }
        }
    }

    /**
     * Two members share a topic, one leaves, the other takes over; every
     * record is read once and the commits end at the end offsets. protocol
     * is the members' group.protocol.
     */
    private String group(String protocol) throws Exception {
        String topic = "java-group";
        String groupId = "java-group-g";
        Map<String, String> seen = new ConcurrentHashMap<>();
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        try (Admin admin = admin()) {
            createTopic(admin, topic, GROUP_PARTITIONS, Map.of());
            Member a = new Member("a", groupId, protocol, topic, seen, errors);
            Member b = new Member("b", groupId, protocol, topic, seen, errors);
            a.thread.start();
            b.thread.start();
            try {
                // Phase 1: both members share the topic.
                waitFor(WAIT, () -> "both members to own partitions (a " + a.assignment + ", b " + b.assignment + ")",
                        () -> !a.assignment.get().isEmpty() && !b.assignment.get().isEmpty()
                                && a.assignment.get().size() + b.assignment.get().size() == GROUP_PARTITIONS);
                Set<TopicPartition> bHad = b.assignment.get();
                produceGroupPhase(topic, 0);
                int phase1 = GROUP_PARTITIONS * RECORDS_PER_PARTITION_PER_PHASE;
                waitFor(WAIT, () -> "the two members to read " + phase1 + " records (read " + seen.size() + ")",
                        () -> seen.size() >= phase1
                        || !errors.isEmpty() || a.failure != null || b.failure != null);
                check(errors.isEmpty(), "phase 1: %s", errors);
                check(a.read > 0 && b.read > 0, "phase 1: a read %d, b read %d: both should have read", a.read, b.read);

                // b leaves (commitSync, then LeaveGroup in close); a takes over b's partitions.
                b.stopAndJoin();
                waitFor(WAIT, () -> "a to own all " + GROUP_PARTITIONS + " partitions after b left (a has " + a.assignment + ")",
                        () -> a.assignment.get().size() == GROUP_PARTITIONS || a.failure != null);
                String type = checkGroupType(admin, groupId, protocol);
                produceGroupPhase(topic, 1);
                int all = 2 * phase1;
                waitFor(WAIT, () -> "a to read up to " + all + " records in all (read " + seen.size() + ")",
                        () -> seen.size() >= all
                        || !errors.isEmpty() || a.failure != null);
                long aRead = a.read;
                a.stopAndJoin();
                check(errors.isEmpty(), "phase 2: %s", errors);
                check(seen.size() == all, "read %d distinct records, produced %d", seen.size(), all);
                for (TopicPartition tp : bHad) {
                    for (int i = 0; i < RECORDS_PER_PARTITION_PER_PHASE; i++) {
                        long o = RECORDS_PER_PARTITION_PER_PHASE + i;
                        check("a".equals(seen.get(where(tp, o))), "%s was read by %s, want a (b had left)",
                                where(tp, o), seen.get(where(tp, o)));
                    }
                }

                // Committed offsets equal the end offsets.
                Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                for (int p = 0; p < GROUP_PARTITIONS; p++) {
                    latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
                }
                var ends = get(admin.listOffsets(latest).all(), "listOffsets latest");
                Map<TopicPartition, OffsetAndMetadata> committed = get(
                        admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata(), "listConsumerGroupOffsets");
                for (TopicPartition tp : latest.keySet()) {
                    OffsetAndMetadata c = committed.get(tp);
                    long end = ends.get(tp).offset();
                    check(end == 2L * RECORDS_PER_PARTITION_PER_PHASE, "%s: end offset %d, want %d", tp, end,
                            2 * RECORDS_PER_PARTITION_PER_PHASE);
                    check(c != null && c.offset() == end, "%s: committed %s, end offset %d", tp, c, end);
                }
                return String.format("%s group: a read %d, b read %d (b owned %s); %d records each read once; commits at the end offsets",
                        type, aRead, b.read, bHad, all);
            } finally {
                a.stop.set(true);
                b.stop.set(true);
                a.thread.join(20_000);
                b.thread.join(20_000);
            }
        }
    }

    /** Checks that the Admin client describes groupId as a group of protocol with one member. */
    private static String checkGroupType(Admin admin, String groupId, String protocol) throws Exception {
        ConsumerGroupDescription d = get(admin.describeConsumerGroups(List.of(groupId)).all(), "describeConsumerGroups").get(groupId);
        check(d.type().toString().equalsIgnoreCase(protocol) && d.members().size() == 1,
                "describeConsumerGroups: type %s with %d members, want %s with 1", d.type(), d.members().size(), protocol);
        return d.type().toString();
    }

    // ---- scenario admin ----

    private String adminScenario() throws Exception {
        String topic = "java-admin";
        String groupId = "java-admin-g";
        List<String> did = new ArrayList<>();
        try (Admin admin = admin()) {
            // describeCluster
            var cluster = admin.describeCluster();
            String clusterId = get(cluster.clusterId(), "describeCluster clusterId");
            Collection<Node> nodes = get(cluster.nodes(), "describeCluster nodes");
            Node controller = get(cluster.controller(), "describeCluster controller");
            check(clusterId != null && !clusterId.isEmpty(), "describeCluster: empty cluster id");
            check(nodes.size() == 1, "describeCluster: %d nodes, want 1: %s", nodes.size(), nodes);
            Node broker = nodes.iterator().next();
            check(broker.port() > 0 && bootstrap.endsWith(":" + broker.port()),
                    "describeCluster: node %s does not match bootstrap %s", broker, bootstrap);
            did.add("describeCluster(" + clusterId + ", controller " + (controller == null ? "none" : controller.id()) + ")");

            // describeMetadataQuorum: this node is the one voter and the leader
            QuorumInfo quorum = get(admin.describeMetadataQuorum().quorumInfo(), "describeMetadataQuorum");
            check(quorum.leaderId() == broker.id() && quorum.voters().size() == 1
                            && quorum.voters().get(0).replicaId() == broker.id()
                            && quorum.voters().get(0).logEndOffset() == quorum.highWatermark()
                            && quorum.highWatermark() > 0 && quorum.observers().isEmpty(),
                    "describeMetadataQuorum: %s, want node %d the one voter and leader", quorum, broker.id());
            did.add("describeMetadataQuorum(leader " + quorum.leaderId() + ", epoch " + quorum.leaderEpoch()
                    + ", high watermark " + quorum.highWatermark() + ")");

            // createTopics with a config, describeConfigs of the topic and the broker
            createTopic(admin, topic, 2, Map.of("retention.ms", "3600000"));
            ConfigResource topicRes = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            ConfigResource brokerRes = new ConfigResource(ConfigResource.Type.BROKER, broker.idString());
            Map<ConfigResource, Config> cfgs = get(admin.describeConfigs(List.of(topicRes, brokerRes)).all(),
                    "describeConfigs topic+broker");
            ConfigEntry retention = cfgs.get(topicRes).get("retention.ms");
            check(retention != null && "3600000".equals(retention.value())
                            && retention.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
                    "topic retention.ms: %s, want 3600000 from DYNAMIC_TOPIC_CONFIG", retention);
            ConfigEntry cleanup = cfgs.get(topicRes).get("cleanup.policy");
            check(cleanup != null && "delete".equals(cleanup.value()), "topic cleanup.policy: %s, want delete", cleanup);
            ConfigEntry segBytes = cfgs.get(brokerRes).get("log.segment.bytes");
            check(segBytes != null && segBytes.value() != null && Long.parseLong(segBytes.value()) > 0,
                    "broker log.segment.bytes: %s", segBytes);
            check(cfgs.get(brokerRes).entries().size() > 10, "broker config has %d entries",
                    cfgs.get(brokerRes).entries().size());
            did.add("describeConfigs(topic, broker " + cfgs.get(brokerRes).entries().size() + " entries)");

            // incrementalAlterConfigs: SET two, then DELETE one back to its default
            get(admin.incrementalAlterConfigs(Map.of(topicRes, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "2000000"), AlterConfigOp.OpType.SET))))
                    .all(), "incrementalAlterConfigs SET");
            Config after = get(admin.describeConfigs(List.of(topicRes)).all(), "describeConfigs after SET").get(topicRes);
            check("7200000".equals(after.get("retention.ms").value()), "after SET: retention.ms %s",
                    after.get("retention.ms"));
            check("2000000".equals(after.get("max.message.bytes").value()), "after SET: max.message.bytes %s",
                    after.get("max.message.bytes"));
            get(admin.incrementalAlterConfigs(Map.of(topicRes, List.of(
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", ""), AlterConfigOp.OpType.DELETE))))
                    .all(), "incrementalAlterConfigs DELETE");
            after = get(admin.describeConfigs(List.of(topicRes)).all(), "describeConfigs after DELETE").get(topicRes);
            ConfigEntry mmb = after.get("max.message.bytes");
            check(mmb != null && mmb.source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG
                            && !"2000000".equals(mmb.value()),
                    "after DELETE: max.message.bytes %s, want the broker default", mmb);
            did.add("incrementalAlterConfigs(SET, DELETE)");

            // createPartitions 2 -> 4
            get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all(), "createPartitions");
            waitForPartitions(admin, topic, 4);
            did.add("createPartitions(2->4)");

            // 100 records with timestamps base + i s into partition 0
            TopicPartition p0 = new TopicPartition(topic, 0);
            long base = System.currentTimeMillis() - 3_600_000;
            try (KafkaProducer<byte[], byte[]> producer = producer("none")) {
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    fs.add(producer.send(new ProducerRecord<>(topic, 0, base + i * 1000L, bytes("k" + i), bytes("v" + i))));
                }
                producer.flush();
                for (Future<RecordMetadata> f : fs) {
                    get(f, "send to " + p0);
                }
            }

            // deleteRecords before offset 40
            Map<TopicPartition, KafkaFuture<DeletedRecords>> lw = admin.deleteRecords(
                    Map.of(p0, RecordsToDelete.beforeOffset(40))).lowWatermarks();
            long low = get(lw.get(p0), "deleteRecords").lowWatermark();
            check(low == 40, "deleteRecords: low watermark %d, want 40", low);
            did.add("deleteRecords(low watermark 40)");

            // listOffsets: earliest, latest, max timestamp, by timestamp (hit and past the end)
            ListOffsetsResultInfo earliest = get(admin.listOffsets(Map.of(p0, OffsetSpec.earliest())).partitionResult(p0), "earliest");
            ListOffsetsResultInfo latest = get(admin.listOffsets(Map.of(p0, OffsetSpec.latest())).partitionResult(p0), "latest");
            ListOffsetsResultInfo maxTs = get(admin.listOffsets(Map.of(p0, OffsetSpec.maxTimestamp())).partitionResult(p0), "maxTimestamp");
            ListOffsetsResultInfo byTs = get(admin.listOffsets(Map.of(p0, OffsetSpec.forTimestamp(base + 50_500))).partitionResult(p0), "forTimestamp");
            ListOffsetsResultInfo pastEnd = get(admin.listOffsets(Map.of(p0, OffsetSpec.forTimestamp(base + 200_000))).partitionResult(p0), "forTimestamp past the end");
            check(earliest.offset() == 40, "listOffsets earliest: %s, want offset 40", earliest);
            check(latest.offset() == 100, "listOffsets latest: %s, want offset 100", latest);
            check(maxTs.offset() == 99 && maxTs.timestamp() == base + 99_000,
                    "listOffsets maxTimestamp: %s, want offset 99 timestamp %d", maxTs, base + 99_000);
            check(byTs.offset() == 51 && byTs.timestamp() == base + 51_000,
                    "listOffsets forTimestamp(base+50.5s): %s, want offset 51 timestamp %d", byTs, base + 51_000);
            check(pastEnd.offset() == -1, "listOffsets forTimestamp past the last record: %s, want offset -1", pastEnd);
            did.add("listOffsets(earliest, latest, maxTimestamp, forTimestamp)");

            // describeLogDirs
            Map<Integer, Map<String, LogDirDescription>> dirs = get(
                    admin.describeLogDirs(List.of(broker.id())).allDescriptions(), "describeLogDirs");
            ReplicaInfo replica = null;
            for (LogDirDescription d : dirs.getOrDefault(broker.id(), Map.of()).values()) {
                check(d.error() == null, "describeLogDirs: log dir error %s", d.error());
                if (d.replicaInfos().containsKey(p0)) {
                    replica = d.replicaInfos().get(p0);
                }
            }
            check(replica != null, "describeLogDirs: %s not in any log dir of broker %d: %s", p0, broker.id(), dirs);
            check(replica.size() > 0, "describeLogDirs: %s has size %d", p0, replica.size());
            did.add("describeLogDirs(" + p0 + " " + replica.size() + " bytes)");

            // a consumer group: list, describe, refuse to delete while it has a member, delete once empty
            try (KafkaConsumer<byte[], byte[]> c = consumer(groupId, "strata-check-admin-member")) {
                c.subscribe(List.of(topic));
                long deadline = System.nanoTime() + WAIT.toNanos();
                int read = 0;
                while (read < 60) {
                    check(System.nanoTime() < deadline, "group %s: read %d of 60 records within %d s", groupId, read,
                            WAIT.toSeconds());
                    read += c.poll(Duration.ofMillis(200)).count();
                }
                c.commitSync(Duration.ofSeconds(10));

                Collection<ConsumerGroupListing> listed = get(admin.listConsumerGroups().all(), "listConsumerGroups");
                check(listed.stream().anyMatch(g -> g.groupId().equals(groupId) && !g.isSimpleConsumerGroup()),
                        "listConsumerGroups: %s not listed as a consumer group: %s", groupId, listed);
                ConsumerGroupDescription desc = get(admin.describeConsumerGroups(List.of(groupId)).all(),
                        "describeConsumerGroups").get(groupId);
                check(desc.members().size() == 1, "describeConsumerGroups: %d members, want 1: %s",
                        desc.members().size(), desc);
                MemberDescription m = desc.members().iterator().next();
                check("strata-check-admin-member".equals(m.clientId()), "describeConsumerGroups: member client id %s",
                        m.clientId());
                check(m.assignment().topicPartitions().size() == 4, "describeConsumerGroups: member assigned %s, want 4 partitions",
                        m.assignment().topicPartitions());
                check(!desc.partitionAssignor().isEmpty(), "describeConsumerGroups: no assignor: %s", desc);
                try {
                    admin.deleteConsumerGroups(List.of(groupId)).all().get(FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    throw new CheckFailed("deleteConsumerGroups of a group with a member succeeded");
                } catch (ExecutionException e) {
                    check(e.getCause() instanceof GroupNotEmptyException,
                            "deleteConsumerGroups of a group with a member: %s, want GroupNotEmptyException", e.getCause());
                }
            }
            Map<TopicPartition, OffsetAndMetadata> committed = get(
                    admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata(), "listConsumerGroupOffsets");
            check(committed.containsKey(p0) && committed.get(p0).offset() == 100,
                    "listConsumerGroupOffsets: %s at %s, want 100", p0, committed.get(p0));
            get(admin.deleteConsumerGroups(List.of(groupId)).all(), "deleteConsumerGroups");
            Collection<ConsumerGroupListing> listed = get(admin.listConsumerGroups().all(), "listConsumerGroups after delete");
            check(listed.stream().noneMatch(g -> g.groupId().equals(groupId)),
                    "listConsumerGroups: %s still listed after deleteConsumerGroups", groupId);
            did.add("listConsumerGroups/describeConsumerGroups/deleteConsumerGroups");

            // deleteTopics
            get(admin.deleteTopics(List.of(topic)).all(), "deleteTopics");
            waitFor(WAIT, topic + " to leave listTopics", () -> {
                try {
                    return !admin.listTopics().names().get(FUTURE_TIMEOUT_SECONDS, TimeUnit.SECONDS).contains(topic);
                } catch (Exception e) {
                    return false;
                }
            });
            did.add("deleteTopics");
        }
        return String.join(", ", did);
    }

    // ---- scenario compacted ----

    /**
     * A compacted topic written in rounds over 10 keys, by one idempotent
     * producer per codec, with a tombstone as key-3's last write; filler
     * records roll the segments. The broker's cleaner (log.cleaner.backoff.ms
     * = 100) compacts them, and the consumer, reading from the beginning
     * across the offset gaps and the batches the cleaner rewrote, sees each
     * key's last value (null for the tombstone) in ascending offsets.
     */
    private String compacted() throws Exception {
        String topic = "java-compacted";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = admin()) {
            createTopic(admin, topic, 1, Map.of("cleanup.policy", "compact", "segment.bytes", "4096",
                    "min.cleanable.dirty.ratio", "0.01"));
        }
        Map<String, String> want = new HashMap<>();
        int written = 0;
        for (String compression : COMPRESSIONS) {
            try (KafkaProducer<byte[], byte[]> producer = producer(compression)) {
                for (int round = 0; round < 4; round++) {
                    for (int k = 0; k < 10; k++) {
                        String key = "key-" + k;
                        String value = k == 3 && compression.equals("zstd") && round == 3 ? null
                                : key + "-" + compression + "-" + round + "-" + "x".repeat(100);
                        get(producer.send(new ProducerRecord<>(topic, 0, bytes(key), bytes(value))), "send " + key);
                        want.put(key, value);
                        written++;
                    }
                }
            }
        }
        try (KafkaProducer<byte[], byte[]> producer = producer("none")) {
            for (int i = 0; i < 30; i++) {
                String key = "filler-" + i;
                get(producer.send(new ProducerRecord<>(topic, 0, bytes(key), bytes("f".repeat(400)))), "send " + key);
                want.put(key, "f".repeat(400));
                written++;
            }
        }
        // Each producer's last batch keeps a record (Strata never writes an
        // empty batch), so up to one more per producer than one per key.
        AtomicReference<List<ConsumerRecord<byte[], byte[]>>> read = new AtomicReference<>(List.of());
        waitFor(Duration.ofSeconds(30), () -> "compaction: " + read.get().size() + " records", () -> {
            try {
                read.set(readFromBeginning(tp));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return read.get().stream().filter(r -> str(r.key()).startsWith("key-")).count() <= 10 + COMPRESSIONS.size();
        });
        List<ConsumerRecord<byte[], byte[]>> got = read.get();
        Map<String, String> last = new HashMap<>();
        long prev = -1;
        for (ConsumerRecord<byte[], byte[]> r : got) {
            check(r.offset() > prev, "offset %d after %d", r.offset(), prev);
            prev = r.offset();
            last.put(str(r.key()), str(r.value()));
        }
        check(last.equals(want), "a consumer from the beginning ends with %s, want %s", last, want);
        check(last.containsKey("key-3") && last.get("key-3") == null, "key-3's tombstone reads as %s", last.get("key-3"));
        return got.size() + " of " + written + " records after compaction, every key's last value";
    }

    /**
     * Transactions: a transactional producer commits a transaction, aborts
     * one, and commits a third holding a group's offset
     * (sendOffsetsToTransaction). A read_committed consumer reads the two
     * committed records only, and the group's committed offset is the one
     * sent in the transaction.
     */
    private String transactions() throws Exception {
        String topic = "java-txn";
        String group = "strata-check-txn-group";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = admin()) {
            createTopic(admin, topic, 1, Map.of());
        }
        Properties p = common();
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "strata-check-txn");
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "strata-check-txn");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, bytes("k"), bytes("committed-1")));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, bytes("k"), bytes("aborted")));
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, bytes("k"), bytes("committed-2")));
            producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(42L)), new ConsumerGroupMetadata(group));
            producer.commitTransaction();
        }
        Properties c = common();
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "strata-check-txn-reader");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            // With read_committed, endOffsets is the last stable offset.
            long end = consumer.endOffsets(List.of(tp), WAIT).get(tp);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (consumer.position(tp, WAIT) < end) {
                check(System.nanoTime() < deadline, "read_committed to %d of %d within %d s", consumer.position(tp, WAIT), end,
                        WAIT.toSeconds());
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    values.add(str(r.value()));
                }
            }
        }
        check(values.equals(List.of("committed-1", "committed-2")), "read_committed read %s, want the two committed records", values);
        try (Admin admin = admin()) {
            OffsetAndMetadata om = get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata(),
                    "listConsumerGroupOffsets " + group).get(tp);
            check(om != null && om.offset() == 42L, "the group's offset committed in the transaction is %s, want 42", om);
        }
        return "2 committed records read, 1 aborted not; the transaction's group offset committed";
    }

    /** Reads partition tp from the beginning to its end offset. */
    private List<ConsumerRecord<byte[], byte[]>> readFromBeginning(TopicPartition tp) throws Exception {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(null, "strata-check-compacted")) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp), WAIT).get(tp);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (consumer.position(tp, WAIT) < end) {
                check(System.nanoTime() < deadline, "read to %d of %d within %d s", consumer.position(tp, WAIT), end,
                        WAIT.toSeconds());
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    out.add(r);
                }
            }
        }
        return out;
    }
}
