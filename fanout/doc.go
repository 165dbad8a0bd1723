// Package fanout delivers values from one or more publishers to any number
// of subscribers through bounded per-subscriber buffers.
//
// The recorder's live feeds (recorder.Recorder.Subscribe) are built on it;
// a program that feeds events from elsewhere (a web page's live view, a
// second recorder, a bridge from another process) uses it directly. It
// imports the standard library only (and internal/oneopt, which reads the
// optional options argument as in every public package).
//
// # Model
//
// Every [Subscription] owns a buffered channel (default 256 values). [Fanout.Publish]
// offers the value to every live subscription with a non-blocking send:
// when a buffer is full the value is dropped for that subscriber only
// (drop-newest) and counted. A slow subscriber therefore never slows the
// publisher or the other subscribers; it loses values instead, and the loss
// is visible in [Fanout.Stats], [Subscription.Dropped] and the log: a
// warning at most once per second per subscriber while it keeps dropping
// (at most 64 drops after the second has passed: see below), and, when the
// subscription closes, one more for the drops no warning has reported yet.
// Every drop is reported by exactly one of them.
//
// # Ordering
//
// Each subscriber receives the values it gets in publish order: Publish
// calls that are ordered (one publisher, or publishers serialised by the
// caller, as the recorder does inside its critical section) are delivered
// in that order; a dropped value leaves a hole, never a reordering.
// Concurrent unsynchronised Publish calls have no order to preserve.
//
// # Cost of Publish
//
// Publish starts no goroutine, never blocks on a subscriber and takes no
// lock shared with other publishers: it loads an immutable snapshot of the
// subscriber list (one atomic load) and, per subscriber, takes that
// subscriber's own mutex around one non-blocking channel send. The mutex
// exists only so that Close cannot close the channel during a send; it is
// held for a few nanoseconds. With no subscriber Publish is one atomic load
// and one atomic add, so it is safe to call inside a caller's critical
// section.
//
// A subscriber whose buffer is full costs the least: the drop path takes
// no lock (a full buffer is seen from the channel's length, which would
// refuse the send as well) and does not read the clock on every drop,
// which on a virtual machine cost more than the rest of a drop together
// (about 200 ns of the recorder's 3 µs per event). After a warning, a
// subscriber's next 63 drops read it, then every 64th: the warning rate
// stays at most one a second, and a steady dropper's drop costs one
// atomic add (its own count; the fan-out's total is the sum of the live
// subscriptions' counts and of those that left, each handed over once
// when it leaves), a few loads, and Publish's own add: on a virtual
// machine where an atomic add costs 25-30 ns, a second add per drop was
// a third of what a dropping subscriber cost a publisher.
//
// # Closing
//
// [Subscription.Close] and [Fanout.Close] are idempotent and safe to call
// concurrently with everything else. After either, the subscription's
// channel is closed once the values already buffered have been received
// (a closed buffered channel still yields its buffer), so a consumer that
// ranges over C drains what was delivered and then stops. Subscribe after
// Close returns a subscription whose channel is already closed; Publish
// after Close is a no-op.
package fanout
