package copilot

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"agentId", "agentName", "agent_type", "arguments", "cancelled", "cacheReadTokens", "chosenModel", "cacheWriteTokens", "code", "command", "content", "contentFilterTriggered", "context", "copilotVersion", "cwd", "gitRoot",
	"currentModel", "data", "deltaContent", "description", "detailedContent", "encryptedContent", "ephemeral", "error",
	"errorCode", "errorMessage", "errorReason", "errorType", "exitCode", "feedback", "finishReason", "hookType", "id", "infoType", "inputDelta", "inputTokens", "isAutopilotContinuation", "kind",
	"message", "messageId", "messagesCleared", "messagesRemovedDuringTruncation", "model", "modelMetrics", "name", "newModel", "outputTokens", "parentToolCallId", "prompt", "properties", "reason", "reasoningOpaque", "turnId",
	"reasoningText", "reasoningTokens", "result", "selectedModel", "sessionId", "shellExecution", "shutdownType", "source", "statusCode",
	"success", "summary", "summaryContent", "timestamp", "tool", "toolCallId", "toolName", "toolRequests", "toolTelemetry", "tokensRemovedDuringTruncation", "transformedContent", "type", "usage",
	"degradedToPhaseId", "fallbackModel", "phaseKind", "status", // HydraFusion failures
)
