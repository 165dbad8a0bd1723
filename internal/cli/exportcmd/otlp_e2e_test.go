package exportcmd_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
)

func TestOTLPExportFailsWithoutCollector(t *testing.T) {
	storage := t.TempDir()
	clitest.RunOK(t, clitest.Plain(), "--storage", storage, "record", "--provider", "claude", "--input", filepath.Join(clitest.Root, "testdata/golden/claude/stream_json_tool_kinds.jsonl"))
	port := clitest.FreePort(t) // nothing listens there
	r := clitest.Run(t, clitest.Plain(), "--storage", storage, "export", "otlp", "--endpoint", fmt.Sprintf("http://127.0.0.1:%d", port), "latest")
	if r.Code == 0 || !strings.Contains(r.ErrOut, "otlp export") {
		t.Fatalf("an export nobody received must fail and say so: %v", r)
	}
	// Once: the OpenTelemetry SDK's own report goes to the debug log.
	if n := strings.Count(r.ErrOut, "connection refused"); n != 1 {
		t.Fatalf("the failure is said %d times, want once:\n%s", n, r.ErrOut)
	}
	r = clitest.Run(t, clitest.Plain(), "--storage", storage, "--verbose", "export", "otlp", "--endpoint", fmt.Sprintf("http://127.0.0.1:%d", port), "latest")
	if !strings.Contains(r.ErrOut, "opentelemetry sdk") {
		t.Fatalf("--verbose does not show what the SDK said:\n%s", r.ErrOut)
	}
	// A malformed endpoint in the environment is named, never replaced by
	// the default.
	r = clitest.Run(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318", "NO_COLOR": "1"}, "--storage", storage, "export", "otlp", "latest")
	if r.Code != 2 || !strings.Contains(r.ErrOut, "$OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Fatalf("malformed endpoint: %v", r)
	}
	r = clitest.Run(t, clitest.Plain(), "--storage", storage, "export", "otlp", "--protocol", "http/json", "latest")
	if r.Code != 2 || !strings.Contains(r.ErrOut, "not supported") {
		t.Fatalf("unsupported protocol: %v", r)
	}
	r = clitest.Run(t, clitest.Plain(), "--storage", storage, "export", "otlp")
	if r.Code != 2 {
		t.Fatalf("no run and no --all is a usage error: %v", r)
	}
}
