package plugload

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/regfile"
)

// ConfigFileHelp says where the config file is, for help texts.
const ConfigFileHelp = "$XDG_CONFIG_HOME/twasm/config.json"

// EnvStackTraces, when set, keeps the debug information of plugins so
// that their traps carry stack traces (for plugin authors).
const EnvStackTraces = "TWASM_PLUGIN_STACK_TRACES"

// Config is the plugin part of the config file
// ($XDG_CONFIG_HOME/twasm/config.json, else ~/.config/twasm/config.json):
//
//	{"plugin_timeout": "30s", "plugin_memory": "512MiB", "plugin_override": false}
//
// Flags win over it; a missing file is no config.
type Config struct {
	Timeout     time.Duration
	Memory      ByteSize
	Override    bool
	StackTraces bool
	path        string
}

type configFile struct {
	Timeout     string `json:"plugin_timeout"`
	Memory      string `json:"plugin_memory"`
	Override    bool   `json:"plugin_override"`
	StackTraces bool   `json:"plugin_stack_traces"`
}

// LoadConfig reads the config file. A file that does not parse is an
// input error naming it: limits the user set must not be ignored silently.
func LoadConfig(f *cmdutil.Factory) (Config, error) {
	c := Config{path: ConfigFileHelp}
	path := f.ConfigFile("config.json")
	if path == "" {
		return c, nil
	}
	c.path = path
	b, err := regfile.ReadFile(path, regfile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, &cmdutil.InputError{Path: path, Err: err}
	}
	var cf configFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		return c, &cmdutil.InputError{Path: path, Err: fmt.Errorf("config file: %w", err)}
	}
	if cf.Timeout != "" {
		if c.Timeout, err = time.ParseDuration(cf.Timeout); err != nil || c.Timeout <= 0 {
			return c, &cmdutil.InputError{Path: path, Err: fmt.Errorf("config file: plugin_timeout %q is not a positive duration (e.g. \"30s\")", cf.Timeout)}
		}
	}
	if cf.Memory != "" {
		if err := c.Memory.Set(cf.Memory); err != nil {
			return c, &cmdutil.InputError{Path: path, Err: fmt.Errorf("config file: plugin_memory: %w", err)}
		}
	}
	c.Override, c.StackTraces = cf.Override, cf.StackTraces
	return c, nil
}

// ByteSize is a size in bytes written with an optional unit: 512MiB, 1GiB,
// 1048576 (bytes), 256M (MiB).
type ByteSize uint64

func (b *ByteSize) String() string {
	if *b == 0 {
		return ""
	}
	if *b%(1<<20) == 0 {
		return fmt.Sprintf("%dMiB", *b>>20)
	}
	return strconv.FormatUint(uint64(*b), 10)
}

// Set parses s.
func (b *ByteSize) Set(s string) error {
	units := []struct {
		suffix string
		mult   uint64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}
	num, mult := strings.TrimSpace(s), uint64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 || n > (1<<32)/mult {
		return fmt.Errorf("%q is not a size between 1 byte and 4GiB (e.g. 512MiB)", s)
	}
	*b = ByteSize(n * mult)
	return nil
}

// Type names the flag's value in help texts.
func (b *ByteSize) Type() string { return "size" }
