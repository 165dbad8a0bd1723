//go:build !wasip1

package opencode

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestKeysCoverGets checks that every key the normalizer names in a Get or
// Path call is declared in keys.
func TestKeysCoverGets(t *testing.T) { sdktest.CheckKeys(t, keys) }

// TestKeyNumbers checks that the k* constants number keys in its order.
func TestKeyNumbers(t *testing.T) {
	sdktest.CheckKeyNumbers(t, keys, nKeys, map[int]string{
		kTwasm: "$twasm", kAgent: "agent", kAttempt: "attempt", kCache: "cache", kCallID: "callID",
		kCommand: "command", kCompleted: "completed", kContent: "content", kCost: "cost", kCreated: "created", kCwd: "cwd", kData: "data",
		kDescription: "description", kDirectory: "directory", kEnd: "end", kError: "error", kExit: "exit",
		kFilename: "filename", kFiles: "files", kFinish: "finish", kID: "id", kIgnored: "ignored", kInput: "input", kInfo: "info",
		kInterrupted: "interrupted", kMessage: "message", kMessageIDCol: "message_id", kMessages: "messages",
		kMessageTimeCreated: "message_time_created", kMessageID: "messageID", kMetadata: "metadata",
		kMime: "mime", kModel: "model", kModelID: "modelID", kName: "name", kOutput: "output",
		kParentIDCol: "parent_id", kParentID: "parentID", kPart: "part", kParts: "parts", kPath: "path", kPrompt: "prompt", kProviderResult: "providerResult", kRan: "ran",
		kRead: "read", kReason: "reason", kReasoning: "reasoning", kRejected: "rejected", kRole: "role", kRoot: "root",
		kRow: "row", kSessionID: "sessionID", kSignal: "signal", kStart: "start", kState: "state", kStatus: "status", kStructured: "structured",
		kSynthetic: "synthetic", kTable: "table", kText: "text", kTime: "time", kTimeCreated: "time_created",
		kTimestamp: "timestamp", kTimeout: "timeout", kTokens: "tokens", kTool: "tool", kTotal: "total", kType: "type",
		kVersion: "version", kWrite: "write", kRetry: "retry", kIdleOutcome: "idle_outcome", kTimeIdle: "time_idle",
		kIdleErrorMessage: "idle_error_message", kIdleErrorType: "idle_error_type",
	})
}
