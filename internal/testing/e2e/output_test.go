package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestConfigNotRegular: a config file (config.json, sync.json) that is a
// named pipe, a link to /dev/zero or a directory is refused at once,
// naming what it is, by every command that reads it (it hung every command
// that loads plugins: a FIFO blocks in open, /dev/zero never ends). The
// wait's deadline only bounds a hang. Issue #25 item 8.
func TestConfigNotRegular(t *testing.T) {
	t.Parallel()
	kinds := map[string]struct {
		make func(t *testing.T, p string)
		want string
	}{
		"fifo": {func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "named pipe"},
		"zero": {func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "device"},
		"dir": {func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "directory"},
	}
	for kind, k := range kinds {
		for file, args := range map[string][]string{
			"config.json": {"plugins", "list"},
			"sync.json":   {"doctor"},
		} {
			t.Run(kind+"/"+file, func(t *testing.T) {
				t.Parallel()
				cfg := t.TempDir()
				if err := os.MkdirAll(filepath.Join(cfg, "twasm"), 0o700); err != nil {
					t.Fatal(err)
				}
				k.make(t, filepath.Join(cfg, "twasm", file))
				all := append([]string{"--storage", t.TempDir()}, args...)
				r := start(t, nil, []string{"XDG_CONFIG_HOME=" + cfg}, all...).wait(t, hangBound)
				if r.code == 0 || !strings.Contains(r.errOut, k.want) || !strings.Contains(r.errOut, file) {
					t.Errorf("twasm %s with %s as %s: %v", strings.Join(args, " "), file, kind, r)
				}
			})
		}
	}
}
