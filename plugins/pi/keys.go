package pi

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes, and Lookup answers every
// key of an object in one pass over it (fields). A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete,
// TestKeyNumbers the k* constants in its order.
var keys = abi.NewKeySet(
	"agent",
	"arguments",
	"branchedFrom",
	"cacheRead",
	"cacheWrite",
	"cancelled",
	"command",
	"content",
	"cost",
	"cwd",
	"details",
	"errorMessage",
	"exitCode",
	"finalError",
	"firstKeptEntryId",
	"firstKeptEntryIndex",
	"id",
	"input",
	"isError",
	"message",
	"messages",
	"model",
	"modelId",
	"name",
	"output",
	"parentId",
	"parentSession",
	"reasoning",
	"redacted",
	"result",
	"results",
	"role",
	"sections",
	"stopReason",
	"success",
	"summary",
	"task",
	"text",
	"thinking",
	"thinkingSignature",
	"timestamp",
	"tokensBefore",
	"toolCallId",
	"toolName",
	"total",
	"totalTokens",
	"type",
	"usage",
)

// The members of keys, numbered in its order: fields are indexed by them.
const (
	kAgent               = iota // agent
	kArguments                  // arguments
	kBranchedFrom               // branchedFrom
	kCacheRead                  // cacheRead
	kCacheWrite                 // cacheWrite
	kCancelled                  // cancelled
	kCommand                    // command
	kContent                    // content
	kCost                       // cost
	kCwd                        // cwd
	kDetails                    // details
	kErrorMessage               // errorMessage
	kExitCode                   // exitCode
	kFinalError                 // finalError
	kFirstKeptEntryID           // firstKeptEntryId
	kFirstKeptEntryIndex        // firstKeptEntryIndex
	kID                         // id
	kInput                      // input
	kIsError                    // isError
	kMessage                    // message
	kMessages                   // messages
	kModel                      // model
	kModelID                    // modelId
	kName                       // name
	kOutput                     // output
	kParentID                   // parentId
	kParentSession              // parentSession
	kReasoning                  // reasoning
	kRedacted                   // redacted
	kResult                     // result
	kResults                    // results
	kRole                       // role
	kSections                   // sections
	kStopReason                 // stopReason
	kSuccess                    // success
	kSummary                    // summary
	kTask                       // task
	kText                       // text
	kThinking                   // thinking
	kThinkingSignature          // thinkingSignature
	kTimestamp                  // timestamp
	kTokensBefore               // tokensBefore
	kToolCallID                 // toolCallId
	kToolName                   // toolName
	kTotal                      // total
	kTotalTokens                // totalTokens
	kType                       // type
	kUsage                      // usage
	nKeys
)
