// Package recordwire reads and writes the primitive types of Kafka's
// coordinator records (__consumer_offsets' consumer and share group
// records, __share_group_state's), which kmsg does not generate: keys with
// int16-length strings, flexible values with compact strings, arrays and
// tagged fields.
//
// A Reader validates as it goes: every length is checked against the bytes
// left before it is used, and the first thing wrong with the input is
// kept (wrapping the caller's sentinel error, with the record's and the
// field's names); after that every read returns the zero value, so a
// decoder reads straight through and checks the error once, at Done.
// Unknown tagged fields are skipped, as Kafka skips them.
package recordwire
