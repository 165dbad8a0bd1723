package codex

import (
	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// forkedHistory is the native name under which the lines a forked
// sub-agent's rollout copied from its parent are declared ignored.
const forkedHistory = "(forked history)"

// isForkedSubAgent reports whether a rollout's own session_meta (m) is
// that of a sub-agent spawned with its parent's history copied into it
// (multi-agent v1's fork_context, v2's fork_turns other than "none"):
// it names the thread it was forked from (forked_from_id) and was
// spawned by a thread (source.subagent.thread_spawn).
func isForkedSubAgent(m abi.Value) bool {
	f := m.Get("forked_from_id")
	return f.Kind() == abi.KindString && !f.Is("") &&
		m.Path("source", "subagent", "thread_spawn").Kind() == abi.KindObject
}

// isUserFork reports whether a rollout's own session_meta (m) is that of
// a thread a user forked (codex fork, the app-server's thread/fork, the
// TUI's backtrack): it names the thread it was forked from
// (forked_from_id) and no thread spawned it. Codex starts its running
// token total from the parent's last (counter.inherits).
func isUserFork(m abi.Value) bool {
	f := m.Get("forked_from_id")
	return f.Kind() == abi.KindString && !f.Is("") &&
		m.Path("source", "subagent", "thread_spawn").Kind() != abi.KindObject
}

// forked reads a line of the history a forked sub-agent's rollout copied
// from its parent (see doc.go, Sub-agents), or a user's fork copied
// (userCopy, see copiedTurn): it reports whether the line was that
// history's (declared ignored: the parent's run records it), or the
// first line of the thread's own first turn, which ends the copy and is
// read as any line.
//
// Codex writes a sub-agent's copy in one batch after the sub-agent's
// session_meta (the parent's rollout as read when spawn_agent ran, its
// items filtered, event messages and token counts included), then the
// sub-agent's first turn, which starts with task_started. The parent
// was inside the turn that called spawn_agent, so the copy ends inside
// a turn: its task_started (cut when fork_turns kept only that turn's
// input) has no task_complete or turn_aborted. The first task_started
// while a copied turn is open is therefore the sub-agent's own. A
// copied session_meta (the parent's, or an ancestor's) starts outside
// any turn; a copy that starts after it (fork_turns "N") starts inside
// one.
//
// The copied token counts are the parent's running totals, and Codex
// starts the thread's total from the last of them
// (last_token_info_from_rollout): they are read, without a report, so
// that the thread's usage is what its own counts add to them.
func (n *normalizer) forked(out *sdk.Out, typ, p abi.Value) bool {
	switch sdk.Name(typ) {
	case "session_meta":
		n.forkOpen = false
	case "turn_context":
		if n.userCopy && !n.copiedTurn(p) {
			return n.ownLines()
		}
	case "event_msg":
		switch sdk.Name(p.Get("type")) {
		case "task_started":
			switch {
			case n.userCopy:
				if !n.copiedTurn(p) {
					return n.ownLines()
				}
			case n.forkOpen:
				return n.ownLines()
			default:
				n.forkOpen = true
			}
		case "task_complete", "turn_aborted":
			n.forkOpen = false
		case "token_count":
			if info := p.Get("info"); info.Kind() == abi.KindObject {
				n.usage.add(info.Get("total_token_usage"), info.Get("last_token_usage"))
			}
		}
	}
	out.Ignored(sdk.S(forkedHistory))
	return true
}

// ownLines ends a copied history: the line being read and those after it
// are the thread's own, and its usage is what its counts add to the
// copy's (see forked). It returns false, for forked to return.
func (n *normalizer) ownLines() bool {
	n.forking, n.userCopy = false, false
	n.usage.rebase()
	return false
}

// copiedHistory reads a session_meta of the thread a user forked the
// rollout from (id): the copying forks (every build before 0.158's
// referenced forks, and Codex's copying path since) write that thread's
// history after the fork's own session_meta, its session_meta first,
// every line stamped again when written, and mark no end to it (doc.go,
// Sub-agents). A fork written by a build that stamps each turn it starts
// with its creation time (forkTime) tells its own turns from the copied
// ones: the copy is read from here as forked history, up to the first
// turn started after the fork (copiedTurn), and copiedHistory reports
// true (the line is declared ignored). Another fork is read whole, the
// copy included, and a warning says so, once.
func (n *normalizer) copiedHistory(id abi.Value, out *sdk.Out) bool {
	if n.forkedFrom == "" || !id.Is(n.forkedFrom) {
		return false
	}
	if n.forkMs > 0 {
		n.forking, n.userCopy, n.forkedFrom = true, true, ""
		out.Ignored(sdk.S(forkedHistory))
		return true
	}
	out.Warn("codex: this fork holds a copy of the history of thread " + sdk.Clip(n.forkedFrom, 200) + " (from its session_meta on); this Codex build marks no end to the copy, so that thread's turns and tokens are counted in this run too")
	n.forkedFrom = ""
	return false
}

// copiedTurn reports whether a turn's task_started or turn_context (p),
// read in the history a user's fork copied, is a copied turn's: one
// started before the fork was created (forkMs), as its turn id, a
// UUIDv7, states to the millisecond, else, for a turn id of another
// form, as its started_at (Unix seconds) states to the second. A turn
// that states neither was started by a build that stamps neither,
// older than the fork's (which stamps every turn it starts): a copied
// one. The copy was read before the fork's id was made, its own turns
// start after: a turn of the same millisecond (or, by started_at, the
// same second) is taken for the fork's own.
func (n *normalizer) copiedTurn(p abi.Value) bool {
	if ms, ok := uuidV7Millis(p.Get("turn_id")); ok {
		return ms < n.forkMs
	}
	if at := p.Get("started_at"); at.Kind() == abi.KindNumber {
		if s, ok := at.Int(); ok {
			return s < n.forkMs/1000
		}
	}
	return true
}

// forkTime is the time (Unix milliseconds) a user's fork was created,
// as the UUIDv7 of its own session_meta (m) states, when the build that
// wrote it stamps every turn it starts (stampsTurns); else 0, and the
// fork's copy cannot be told from its own turns.
func forkTime(m abi.Value) int64 {
	if !stampsTurns(m.Get("cli_version")) {
		return 0
	}
	id := m.Get("id")
	if id.Kind() != abi.KindString {
		id = m.Get("session_id")
	}
	ms, _ := uuidV7Millis(id)
	return ms
}

// stampsTurns reports whether a Codex build (its cli_version) writes
// every turn's task_started with a UUIDv7 turn id and its started_at,
// and turn_context with the turn id: 0.125 and later, as the real
// rollouts of 0.125, 0.130, 0.135, 0.147 and 0.158 under
// testdata/captures/codex show. Whether older builds did is not known:
// they are not trusted to.
func stampsTurns(v abi.Value) bool {
	if v.Kind() != abi.KindString {
		return false
	}
	s := string(v.Raw()) // "0.147.0": the quotes end the number
	s = s[1:]
	num := func() (int, bool) {
		n, digits := 0, 0
		for len(s) > 0 && s[0] >= '0' && s[0] <= '9' && digits < 9 {
			n, s, digits = n*10+int(s[0]-'0'), s[1:], digits+1
		}
		return n, digits > 0
	}
	major, ok := num()
	if !ok || len(s) == 0 || s[0] != '.' {
		return false
	}
	s = s[1:]
	minor, ok := num()
	return ok && (major > 0 || minor >= 125)
}

// uuidV7Millis is the time (Unix milliseconds) a UUIDv7 (v, a string in
// its 8-4-4-4-12 hex form) was made at, its first 48 bits.
func uuidV7Millis(v abi.Value) (int64, bool) {
	if v.Kind() != abi.KindString {
		return 0, false
	}
	s := v.Raw() // with its quotes; an escaped one is no UUID
	if len(s) != 38 {
		return 0, false
	}
	s = s[1:37]
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || s[14] != '7' {
		return 0, false
	}
	var ms int64
	for i := 0; i < 13; i++ {
		if i == 8 {
			continue
		}
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		ms = ms<<4 | int64(d)
	}
	return ms, ms > 0
}
