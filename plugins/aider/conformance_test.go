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
// "Malformed response #N, retrying..."), commit and confirmation (in
// each version's shape: "? y", "? [Y/n] y", "(Y)es/(N)o ... [Yes]: y") a
// call in order (failed edits and commits and declined confirmations,
// whose answer is not yes or all, not ok), one error per litellm line
// (older versions: after "BadRequestError: " or "Unexpected error: ") and
// per token limit hit or empty response, and each shell command Aider
// ran after the user allowed it ("Run shell command(s)? ... y", then
// "Running <command>") a call, failed when "Error running command:"
// follows it. After an error (no call, prompt or answer since), Aider's
// offer to open its URL ("Open URL for more info?") is the error's, no
// call, and a traceback is the error's too; a traceback after no error
// is one (an exception Aider caught, however many chained tracebacks it
// prints). The tokens are TestSessionUsageMatchesRaw's, over the same
// inputs.
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
	reCall    = regexp.MustCompile(`^> (Applied edit to |Commit [0-9a-f]{7,40} |Unable to commit: |The LLM did not conform to the edit format|Malformed response #|.*\(Y\)es/\(N\)o.*\]: ?(.*?) *$|.*\? (?:\[[Yy]/[Nn]\] )?((?i)y|n|yes|no) *$)`)
	reLiteLLM = regexp.MustCompile(`^> ((BadRequestError|Unexpected error): |litellm\.\w*Error|Model .* has hit a token limit!|Empty response received from LLM\.)`)
	reShellOK = regexp.MustCompile(`^> Run shell commands?\? .*\]: ?[yY]`)
	reRunning = regexp.MustCompile(`^> Running `)
	reOffer   = regexp.MustCompile(`^> Open URL for more info\? `)
)

// historyFacts reads Aider's own lines: the calls in order with whether
// they failed, the litellm errors.
func historyFacts(raw string) (calls []string, failed map[string]bool, errs int) {
	failed = map[string]bool{}
	inBlock := false
	shellOK := false // the last of Aider's lines allowed shell commands, or ran one
	errLast := false // an error, and no call, prompt or answer since
	trace := false   // in a traceback
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "Error running command: ") || strings.HasPrefix(line, "> Error running command: ") {
			failed["aider-"+strconv.Itoa(len(calls))] = true
		}
		switch t := strings.TrimSpace(line); {
		case strings.HasPrefix(t, "<<<<<<< SEARCH"):
			inBlock = true
		case strings.HasPrefix(t, ">>>>>>> REPLACE"):
			inBlock = false
		}
		if inBlock {
			continue
		}
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, ">") {
			errLast, trace = false, false
		}
		if line == "> Traceback (most recent call last):  " || line == "> Traceback (most recent call last):" {
			if !trace && !errLast {
				errs++
				errLast = true
			}
			trace = true
			continue
		}
		if errLast && reOffer.MatchString(line) {
			continue
		}
		if shellOK && reRunning.MatchString(line) {
			calls = append(calls, "aider-"+strconv.Itoa(len(calls)+1))
			continue
		}
		if t := strings.TrimSpace(strings.TrimPrefix(line, ">")); t != "" {
			shellOK = reShellOK.MatchString(line) || shellOK && strings.HasPrefix(line, "> Running ")
		}
		if m := reCall.FindStringSubmatch(line); m != nil {
			errLast, trace = false, false
			id := "aider-" + strconv.Itoa(len(calls)+1)
			calls = append(calls, id)
			ans, confirm := strings.ToLower(m[2]+m[3]), strings.Contains(m[1], "(Y)es/(N)o") || m[3] != ""
			failed[id] = strings.HasPrefix(m[1], "Unable") || strings.HasPrefix(m[1], "The LLM") || strings.HasPrefix(m[1], "Malformed") ||
				confirm && !strings.HasPrefix(ans, "y") && !strings.HasPrefix(ans, "a")
		}
		if reLiteLLM.MatchString(line) {
			errs++
			errLast, trace = true, false
		}
		if strings.HasPrefix(line, "> Retrying in ") {
			trace = false
		}
	}
	return calls, failed, errs
}
