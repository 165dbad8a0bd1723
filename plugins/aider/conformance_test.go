//go:build !wasip1

package aider_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/internal/testing/plugintest"
)

// checkFacts checks the run of a golden input or capture (TestGolden)
// against facts read from the raw lines apart from the plugin (with
// regular expressions): each applied edit, edit Aider could not apply
// ("The LLM did not conform to the edit format.", older versions'
// "Malformed response #N, retrying..."), commit and confirmation a call
// in order (failed edits and commits and declined confirmations not ok),
// one error per litellm line. The tokens are TestSessionUsageMatchesRaw's, over
// the same inputs.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	calls, failed, errs := historyFacts(string(r.Raw))
	o.CheckCalls(t, calls)
	o.CheckFailed(t, failed)
	if len(o.Result.Errors) != errs {
		t.Errorf("%d errors, the raw input has %d litellm error lines", len(o.Result.Errors), errs)
	}
}

var (
	reCall    = regexp.MustCompile(`^> (Applied edit to |Commit [0-9a-f]{7,40} |Unable to commit: |The LLM did not conform to the edit format|Malformed response #|.*\(Y\)es/\(N\)o.*\]: ?(.*?) *$)`)
	reLiteLLM = regexp.MustCompile(`^> litellm\.\w*Error`)
)

// historyFacts reads Aider's own lines: the calls in order with whether
// they failed, the litellm errors.
func historyFacts(raw string) (calls []string, failed map[string]bool, errs int) {
	failed = map[string]bool{}
	inBlock := false
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch t := strings.TrimSpace(line); {
		case strings.HasPrefix(t, "<<<<<<< SEARCH"):
			inBlock = true
		case strings.HasPrefix(t, ">>>>>>> REPLACE"):
			inBlock = false
		}
		if inBlock {
			continue
		}
		if m := reCall.FindStringSubmatch(line); m != nil {
			id := "aider-" + strconv.Itoa(len(calls)+1)
			calls = append(calls, id)
			ans := strings.ToLower(m[2])
			failed[id] = strings.HasPrefix(m[1], "Unable") || strings.HasPrefix(m[1], "The LLM") || strings.HasPrefix(m[1], "Malformed") || ans == "n" || ans == "no" || ans == "s" || ans == "d"
		}
		if reLiteLLM.MatchString(line) {
			errs++
		}
	}
	return calls, failed, errs
}
