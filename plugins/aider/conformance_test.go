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
// "Malformed response #N, retrying..."), commit and
// confirmation a call in order (failed edits and commits and declined
// confirmations not ok), one error
// per litellm line, and the tokens the sum of the Tokens lines.
func checkFacts(t *testing.T, r *sdktest.Result) {
	o := plugintest.FromResult(r)
	calls, failed, errs, in, out := historyFacts(string(r.Raw))
	o.CheckCalls(t, calls)
	o.CheckFailed(t, failed)
	if len(o.Result.Errors) != errs {
		t.Errorf("%d errors, the raw input has %d litellm error lines", len(o.Result.Errors), errs)
	}
	if gi, go_ := o.Tokens(); gi != in || go_ != out {
		t.Errorf("tokens in %d out %d, the Tokens lines sum to %d and %d", gi, go_, in, out)
	}
}

var (
	reCall    = regexp.MustCompile(`^> (Applied edit to |Commit [0-9a-f]{7,40} |Unable to commit: |The LLM did not conform to the edit format|Malformed response #|.*\(Y\)es/\(N\)o.*\]: ?(.*?) *$)`)
	reTokens  = regexp.MustCompile(`^> Tokens: (.*?) sent, (?:.*, )?(.*?) received\.`)
	reLiteLLM = regexp.MustCompile(`^> litellm\.\w*Error`)
)

// historyFacts reads Aider's own lines: the calls in order with whether
// they failed, the litellm errors, the tokens sent and received.
func historyFacts(raw string) (calls []string, failed map[string]bool, errs int, in, out int64) {
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
			failed[id] = strings.HasPrefix(m[1], "Unable") || strings.HasPrefix(m[1], "The LLM") || strings.HasPrefix(m[1], "Malformed") || ans == "n" || ans == "no" || ans == "s"
		}
		if reLiteLLM.MatchString(line) {
			errs++
		}
		if m := reTokens.FindStringSubmatch(line); m != nil {
			in += count(m[1])
			out += count(m[2])
		}
	}
	return calls, failed, errs, in, out
}

// count reads "3.2k", "12k", "1,234", "56".
func count(s string) int64 {
	mul := 1.0
	if strings.HasSuffix(s, "k") {
		mul, s = 1000, strings.TrimSuffix(s, "k")
	}
	f, _ := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return int64(f*mul + 0.5)
}
