// Package runtime is the serial executor of coordinator partitions (Kafka's
// CoordinatorRuntime): one goroutine per partition this broker leads drives
// a pure Shard (the group coordinator now, transactions later).
//
// Contract:
//   - Start(p) loads partition p by replaying its Log from offset 0 into a
//     new Shard, then serves it; Resign(p) stops it; Close stops all.
//   - Submit(p, req, client, done) runs req on p's goroutine. done is called
//     exactly once: with the shard's response once the op's records (and
//     those of every earlier op) are durable, or with an error response
//     built by Options.ErrorResponse: NOT_COORDINATOR when p is not led
//     here or resigns, COORDINATOR_LOAD_IN_PROGRESS while p loads,
//     COORDINATOR_NOT_AVAILABLE when its queue is full or an append fails
//     (NOT_COORDINATOR if the Appender says ErrNotLeader).
//   - A Result's replies are released only after Appender.Append's wait
//     returned nil; ops are handled one at a time, and each waits for its
//     own append (no pipelining yet).
//   - On a failed append the shard is discarded, every outstanding op
//     (including deferred ones such as a JoinGroup waiting for a rebalance)
//     is answered with the error, and the next tick reloads from the Log.
//   - SubmitEvent(p, ev, done) runs an event of the broker's own (Op.Event,
//     such as "this transaction's markers are written") the same way; done
//     gets the shard's Reply.Err, or a *CodeError with the code a request
//     would have got.
//   - A Result's records are one batch (transactional when Result.Txn is
//     set, through the Appender's TxnAppender side), then one control batch
//     per marker; its Effects go to Options.OnEffects once all of them are
//     durable, before its replies are released.
//   - A load hands transactional records and markers to the shard's
//     TxnReplayer side; a shard without one cannot load such a partition.
//   - Timers: each partition has a Ticker (Options.NewTicker); every tick
//     calls Shard.Tick(Options.Clock.Now()), and so does the end of a load.
//     A tick whose Result has a WakeAt ticks once more at that moment
//     (Options.After), so a timer seen ahead fires when due, not at the
//     next periodic tick.
//
// Invariants: every goroutine here belongs to a started partition and exits
// on Resign or Close (tests check with goleak); only a partition's goroutine
// touches its shard; a token is outstanding from Handle until its reply or
// its failure.
package runtime
