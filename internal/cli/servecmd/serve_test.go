package servecmd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/cli/usagecmd"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/viewstest"
	"github.com/twasm/twasm/internal/usage"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestNewCmdServe(t *testing.T) {
	tests := []struct {
		argv string
		code int
		want Options
	}{
		{"", 0, Options{Addr: DefaultAddr}},
		{"--addr 127.0.0.1:0 --redact", 0, Options{Addr: "127.0.0.1:0", Redact: true}},
		{"--addr 0.0.0.0:9000 --token abc", 0, Options{Addr: "0.0.0.0:9000", Token: "abc"}},
		{"--addr nope", cmdutil.ExitUsage, Options{}},
		{"extra", cmdutil.ExitFailure, Options{}}, // Main makes it a usage error (isUsage)
	}
	for _, tc := range tests {
		t.Run(tc.argv, func(t *testing.T) {
			env := cmdtest.New(t)
			var got *Options
			err := cmdtest.Parse(NewCmdServe(env.F, func(_ context.Context, o *Options) error { got = o; return nil }), tc.argv)
			if cmdutil.ExitCode(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d", cmdutil.ExitCode(err), err, tc.code)
			}
			if tc.code != 0 {
				return
			}
			if got.Addr != tc.want.Addr || got.Token != tc.want.Token || got.Redact != tc.want.Redact {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRunServe serves the storage until the context ends: on loopback
// without a token, elsewhere with one it generates and prints.
func TestRunServe(t *testing.T) {
	tests := []struct {
		name      string
		addr      string
		wantToken bool
	}{
		{"loopback", "127.0.0.1:0", false},
		{"any address", "0.0.0.0:0", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ready := make(chan string, 1)
			done := make(chan error, 1)
			go func() { done <- Run(ctx, &Options{F: env.F, Addr: tc.addr, Ready: func(a string) { ready <- a }}) }()
			var addr string
			select {
			case addr = <-ready:
			case err := <-done:
				t.Fatalf("Run: %v", err)
			}
			port := addr[strings.LastIndexByte(addr, ':'):]
			base := "http://127.0.0.1" + port
			printed := env.Out.String()
			token := regexp.MustCompile(`\?token=([0-9a-f]{32})`).FindStringSubmatch(printed)
			if (token != nil) != tc.wantToken || !strings.Contains(printed, "twasm serve: http://") {
				t.Fatalf("printed %q", printed)
			}
			get := func(path string, header string) (int, string) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
				if header != "" {
					req.Header.Set("Authorization", header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			auth := ""
			if tc.wantToken {
				if code, _ := get("/", ""); code != http.StatusUnauthorized {
					t.Fatalf("without the token: %d", code)
				}
				auth = "Bearer " + token[1]
			}
			code, body := get("/", auth)
			if code != 200 || !strings.Contains(body, `data-run="`+viewstest.Root+`"`) {
				t.Fatalf("%d\n%s", code, body)
			}
			// The usage page reads the ledgers as twasm usage does (the
			// index): its total is usage.Build's.
			src, table, err := UsageSource(env.F, io.Discard)(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := usage.Build(src, table, usage.Options{Location: time.UTC})
			if err != nil {
				t.Fatal(err)
			}
			want := `<tfoot id="total-day"><tr><th>total</th><td class="n">` + strconv.Itoa(rep.Total.Sessions) + `</td>`
			code, body = get("/usage", auth)
			if code != 200 || rep.Total.Cost.USD == "" || !strings.Contains(body, want) ||
				!strings.Contains(body, `<td class="n usd">`+rep.Total.Cost.USD+`</td><td class="src">`+rep.Total.Cost.Source+`</td><td></td></tr></tfoot>`) {
				t.Fatalf("/usage: %d, want the total %s (%s)\n%s", code, rep.Total.Cost.USD, rep.Total.Cost.Source, body)
			}
			http.DefaultClient.CloseIdleConnections()
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Run after the context ended: %v", err)
			}
		})
	}
}

// tzChild names the time zone TestUsagePageDaysAsCLI's child process
// runs in.
const tzChild = "TWASM_TEST_TZ_CHILD"

// TestUsagePageDaysAsCLI: the usage page cuts days where twasm usage
// does: in the local time zone unless --timezone says another. The
// test runs itself again in a child process whose local zone is
// UTC+14 (TZ), where the fixture's runs, at noon UTC, fall on the next
// day; the page's days and their figures must be those `twasm usage
// --by day --json` prints in the same process, and with --timezone UTC
// those of `twasm usage --timezone UTC`.
func TestUsagePageDaysAsCLI(t *testing.T) {
	zone := os.Getenv(tzChild)
	if zone == "" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^TestUsagePageDaysAsCLI$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "TZ=Etc/GMT-14", tzChild+"=Etc/GMT-14")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestUsagePageDaysAsCLI") {
			t.Fatalf("the child in TZ=Etc/GMT-14: %v\n%s", err, out)
		}
		return
	}
	if _, off := time.Now().Zone(); off != 14*3600 {
		t.Fatalf("the child's local zone is %d s from UTC, want TZ %s's", off, zone)
	}
	for _, tc := range []struct {
		name, serveArgs, usageArgs string
	}{
		{"local zone", "", ""},
		{"--timezone UTC", "--timezone UTC", "--timezone UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.New(t)
			if err := cmdtest.Parse(usagecmd.NewCmdUsage(env.F, nil), "--by day --json "+tc.usageArgs); err != nil {
				t.Fatal(err)
			}
			var rep usage.Report
			if err := json.Unmarshal(env.Out.Bytes(), &rep); err != nil {
				t.Fatalf("%v: %s", err, env.Out)
			}
			var want []string
			for _, g := range rep.Groups {
				want = append(want, g.Key+" "+strconv.Itoa(g.Sessions)+" "+strconv.Itoa(g.Requests))
			}
			env.Out.Reset()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ready := make(chan string, 1)
			done := make(chan error, 1)
			cmd := NewCmdServe(env.F, func(_ context.Context, o *Options) error {
				o.Addr, o.Ready = "127.0.0.1:0", func(a string) { ready <- a }
				return Run(ctx, o)
			})
			go func() { done <- cmdtest.Parse(cmd, tc.serveArgs) }()
			var addr string
			select {
			case addr = <-ready:
			case err := <-done:
				t.Fatalf("serve: %v", err)
			}
			resp, err := http.Get("http://" + addr + "/usage")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got []string
			for _, m := range dayRow.FindAllStringSubmatch(part(string(body), `id="chart-day"`, "</tbody>"), -1) {
				got = append(got, m[1]+" "+m[2]+" "+m[3])
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("the page's days %q, twasm usage's %q", got, want)
			}
			http.DefaultClient.CloseIdleConnections()
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// dayRow is a row of the usage page's table by day: its day, sessions
// and requests.
var dayRow = regexp.MustCompile(`<tr><th>(\d{4}-\d{2}-\d{2})</th><td class="n">(\d+)</td><td class="n">(\d+)</td>`)

// part is s from the first start to the end that follows it ("" when
// either is missing).
func part(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], end)
	if j < 0 {
		return ""
	}
	return s[i : i+j]
}
