package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPackageInitsCheap: every twasm process, `twasm --version` as much
// as a record, runs the package initialisers of every package the binary
// links, so none of twasm's own may do work only some commands need (a
// regular expression compiled, a table parsed): that is done on first
// use. The test binary links every command's package; it is run again
// with GODEBUG=inittrace=1, and each of twasm's runtime packages must
// allocate at most a few small objects when it is initialised. Before
// regular expressions were compiled on first use, usagecmd's init made
// 207 allocations, prices' 130 and views' 65.
func TestPackageInitsCheap(t *testing.T) {
	if os.Getenv("TWASM_INITTRACE_CHILD") != "" {
		return // the child only has to start
	}
	const maxAllocs, maxBytes = 16, 8 << 10
	cmd := exec.Command(os.Args[0], "-test.run=^TestPackageInitsCheap$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TWASM_INITTRACE_CHILD=1", "GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",inittrace=1", ","))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run the test binary with inittrace: %v\n%s", err, stderr.String())
	}
	// init github.com/twasm/twasm/internal/views @53 ms, 0.15 ms clock, 10816 bytes, 65 allocs
	line := regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	checked := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil || !runtimePackage(m[1]) {
			continue
		}
		checked++
		pkg := m[1]
		bytesN, _ := strconv.Atoi(m[2])
		allocs, _ := strconv.Atoi(m[3])
		t.Run(strings.TrimPrefix(pkg, "github.com/twasm/twasm/"), func(t *testing.T) {
			if allocs > maxAllocs || bytesN > maxBytes {
				t.Errorf("init of %s: %d allocations, %d bytes; want at most %d and %d: do the work on first use", pkg, allocs, bytesN, maxAllocs, maxBytes)
			}
		})
	}
	if checked < 10 {
		t.Fatalf("inittrace named %d of twasm's packages; want the packages the commands link:\n%s", checked, stderr.String())
	}
}

// runtimePackage says whether pkg is one of twasm's packages that the
// binary links: not a test helper or build tool, nor a test package.
func runtimePackage(pkg string) bool {
	rest, ok := strings.CutPrefix(pkg, "github.com/twasm/twasm/")
	if !ok {
		return false
	}
	return !strings.HasPrefix(rest, "internal/testing/") && !strings.HasPrefix(rest, "internal/tools/") &&
		!strings.HasSuffix(rest, "test") && !strings.HasSuffix(rest, ".test")
}
