//go:build !wasip1

package pi

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
		kAgent:               "agent",
		kArguments:           "arguments",
		kBranchedFrom:        "branchedFrom",
		kCacheRead:           "cacheRead",
		kCacheWrite:          "cacheWrite",
		kCancelled:           "cancelled",
		kCommand:             "command",
		kContent:             "content",
		kCost:                "cost",
		kCwd:                 "cwd",
		kDetails:             "details",
		kErrorMessage:        "errorMessage",
		kExitCode:            "exitCode",
		kFinalError:          "finalError",
		kFirstKeptEntryID:    "firstKeptEntryId",
		kFirstKeptEntryIndex: "firstKeptEntryIndex",
		kID:                  "id",
		kInput:               "input",
		kIsError:             "isError",
		kMessage:             "message",
		kMessages:            "messages",
		kModel:               "model",
		kModelID:             "modelId",
		kName:                "name",
		kOutput:              "output",
		kParentID:            "parentId",
		kParentSession:       "parentSession",
		kReasoning:           "reasoning",
		kRedacted:            "redacted",
		kResult:              "result",
		kResults:             "results",
		kRole:                "role",
		kSections:            "sections",
		kStopReason:          "stopReason",
		kSuccess:             "success",
		kSummary:             "summary",
		kTask:                "task",
		kText:                "text",
		kThinking:            "thinking",
		kThinkingSignature:   "thinkingSignature",
		kTimestamp:           "timestamp",
		kTokensBefore:        "tokensBefore",
		kToolCallID:          "toolCallId",
		kToolName:            "toolName",
		kTotal:               "total",
		kTotalTokens:         "totalTokens",
		kType:                "type",
		kUsage:               "usage",
	})
}
