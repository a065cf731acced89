// Package assignor holds KIP-848's server-side partition assignors, as
// pure functions: Uniform (Kafka's UniformAssignor, the default) and Range
// (Kafka's sticky server-side RangeAssignor). The group coordinator builds
// a Spec from the group's members, their subscriptions and their previous
// target assignments, and turns the result into the next target
// assignment; ByName and Names are what it offers and looks up (the
// broker's group.consumer.assignors picks among them, the first the
// default).
//
// Contract. Assign(spec) is a pure, deterministic function of spec: no
// clock, no randomness, no I/O, no goroutines, and nothing in the result
// depends on the iteration order of a map: every order the assignors
// follow derives from member IDs, topic ids and counts. Its result
//   - has an entry for every member, an empty Assignment for one that gets
//     nothing;
//   - gives every partition of every topic that some member subscribes to
//     (and that spec.Topics holds) to exactly one member, one subscribed to
//     that topic, and assigns nothing else;
//   - lists each topic's partitions ascending, without duplicates, with no
//     entry for a topic with none;
//   - is a fixed point: assigning again with the result as every member's
//     Current gives the same result (stickiness; tested as a property).
//
// Input. spec.Members must be strictly ascending by ID (Assign panics
// otherwise: it is the coordinator's bug). Everything else is taken as it
// comes, since Current is history: Subscribed is read as a set; a
// subscribed topic missing from spec.Topics, or with no partition, is
// ignored (Kafka fails the assignment; here it has simply nothing to
// give); in Current, topics the member no longer subscribes to, missing
// topics and partitions out of range are dropped, and so is a partition
// that two members claim (it is reassigned as if new).
//
// Simple (simple.go) is the assignor of KIP-932 share groups, whose
// members may share a partition: it is not an Assignor (its result gives
// a partition to several members when they outnumber the partitions) and
// ByName does not offer it to consumer groups. Its contract is on its type.
//
// Departures from Kafka, on purpose: ties are broken by member ID and
// topic id where Kafka follows hash-map order; invalid input is repaired
// (as above) where Kafka throws; Uniform's heterogeneous balancing runs
// until no move helps, without Kafka's cap of 16 rounds, so that its
// result is always a fixed point (a potential argument bounds it; see
// balance); Range keeps the stickiness of Kafka's first KIP-848 range
// assignor, which later versions replaced by ordering members by instance
// id. Rack awareness is out of scope: no assignor reads racks.
package assignor
