package opencode

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"$twasm", "agent", "attempt", "cache", "callID", "command", "completed", "cost", "created", "cwd", "data",
	"description", "directory", "end", "error", "exit", "filename", "finish", "id", "ignored", "input",
	"info", "interrupted", "message", "message_id", "messages", "message_time_created", "messageID", "metadata", "mime",
	"model", "modelID", "name", "output", "parent_id", "parentID", "part", "parts", "path", "prompt", "read",
	"reason", "reasoning", "role", "root", "row", "sessionID", "start", "state", "status", "synthetic",
	"table", "text", "time", "time_created", "timestamp", "tokens", "tool", "total", "type", "version",
	"write",
)
