package plugload

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/cli/cmdutil"
)

func factory(env map[string]string) *cmdutil.Factory {
	return &cmdutil.Factory{Getenv: func(k string) string { return env[k] }}
}

func TestByteSize(t *testing.T) {
	cases := []struct {
		in   string
		want ByteSize
		bad  bool
	}{
		{in: "512MiB", want: 512 << 20}, {in: "1GiB", want: 1 << 30}, {in: "256M", want: 256 << 20},
		{in: "1048576", want: 1 << 20}, {in: "64 KiB", want: 64 << 10},
		{in: "0", bad: true}, {in: "5GiB", bad: true}, {in: "lots", bad: true}, {in: "-1M", bad: true},
	}
	for _, c := range cases {
		var b ByteSize
		err := b.Set(c.in)
		if c.bad != (err != nil) || !c.bad && b != c.want {
			t.Errorf("%q: %d, %v", c.in, b, err)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	f := factory(map[string]string{"XDG_CONFIG_HOME": dir})
	// No file: no config.
	c, err := LoadConfig(f)
	if err != nil || c.Timeout != 0 || c.Memory != 0 || c.Override {
		t.Fatalf("%+v, %v", c, err)
	}
	path := filepath.Join(dir, "twasm", "config.json")
	write := func(s string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"plugin_timeout":"30s","plugin_memory":"512MiB","plugin_override":true}`)
	c, err = LoadConfig(f)
	if err != nil || c.Timeout != 30*time.Second || c.Memory != 512<<20 || !c.Override {
		t.Fatalf("%+v, %v", c, err)
	}
	// What the user wrote is never ignored silently.
	for _, bad := range []string{`{"plugin_timeout":"soon"}`, `{"plugin_memory":"lots"}`, `{"plugin_timeuot":"30s"}`, `not json`} {
		write(bad)
		_, err := LoadConfig(f)
		var ie *cmdutil.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), path) && ie.Path != path {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
