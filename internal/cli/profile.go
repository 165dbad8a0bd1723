package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"

	"github.com/spf13/pflag"
)

// profiling is the hidden --cpuprofile and --exectrace flags: a CPU
// profile (go tool pprof) or an execution trace (go tool trace) of the
// whole command, from its flags parsed to its return, for finding where
// a command's time goes. Hidden: for developers, not part of the
// interface users rely on.
type profiling struct {
	cpu, trace string
	files      []*os.File
}

func (p *profiling) flags(fs *pflag.FlagSet) {
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to `file`")
	fs.StringVar(&p.trace, "exectrace", "", "write an execution trace of the command to `file`")
	_ = fs.MarkHidden("cpuprofile")
	_ = fs.MarkHidden("exectrace")
}

// start starts what the flags ask for; on error nothing is left running.
func (p *profiling) start() error {
	if p.cpu != "" {
		f, err := os.Create(p.cpu)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		p.files = append(p.files, f)
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Join(fmt.Errorf("--cpuprofile: %w", err), p.stop())
		}
	}
	if p.trace != "" {
		f, err := os.Create(p.trace)
		if err != nil {
			return errors.Join(fmt.Errorf("--exectrace: %w", err), p.stop())
		}
		p.files = append(p.files, f)
		if err := trace.Start(f); err != nil {
			return errors.Join(fmt.Errorf("--exectrace: %w", err), p.stop())
		}
	}
	return nil
}

// stop ends what start began and closes its files.
func (p *profiling) stop() error {
	if len(p.files) == 0 {
		return nil
	}
	if p.cpu != "" {
		pprof.StopCPUProfile()
	}
	if p.trace != "" {
		trace.Stop()
	}
	var errs []error
	for _, f := range p.files {
		errs = append(errs, f.Close())
	}
	p.files = nil
	return errors.Join(errs...)
}
