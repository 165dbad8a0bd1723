package exportcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/twasm/twasm/internal/cli/build"
	"github.com/twasm/twasm/internal/cli/cmdutil"
	"github.com/twasm/twasm/internal/export"
)

// OTLPOptions are the inputs of an OTLP export.
type OTLPOptions struct {
	// Protocol is grpc or http/protobuf; "" reads
	// $OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then $OTEL_EXPORTER_OTLP_PROTOCOL,
	// else http/protobuf (the OTLP default).
	Protocol string
	// Endpoint is a URL (http://host:4318 for HTTP, http://host:4317 for
	// gRPC; https for TLS); "" reads $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
	// then $OTEL_EXPORTER_OTLP_ENDPOINT, else the specification's default
	// for a local Collector (ResolveEndpoint).
	Endpoint string
	// Content includes message content (opt-in; also turned on by
	// $OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
	Content bool
}

// AddOTLPFlags binds the OTLP flags, shared by `export otlp` and
// `record --otlp`.
func AddOTLPFlags(cmd *cobra.Command, o *OTLPOptions, prefix string) {
	fl := cmd.Flags()
	fl.StringVar(&o.Protocol, prefix+"protocol", "", "OTLP protocol: grpc or http/protobuf (default: $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fl.StringVar(&o.Endpoint, prefix+"endpoint", "", "OTLP endpoint URL; HTTP adds /v1/traces to a URL without a path (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, $OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318, or http://localhost:4317 for grpc)")
	fl.BoolVar(&o.Content, prefix+"content", false, "include prompts, answers, thinking, tool arguments and outputs in spans (opt-in)")
}

func (o *OTLPOptions) protocol(getenv func(string) string) (string, error) {
	p := o.Protocol
	if p == "" {
		p = getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	}
	if p == "" {
		p = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "", "http/protobuf", "http":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", &cmdutil.FlagError{Err: fmt.Errorf("OTLP protocol %q is not supported: use grpc or http/protobuf", p)}
}

// ResolveEndpoint returns the URL spans are sent to over proto, and where it was
// named. It follows the OpenTelemetry specification rather than the Go
// SDK's own defaults, which assume TLS on localhost: --endpoint first (for
// HTTP, a URL without a path gets /v1/traces); then
// $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as it is; then
// $OTEL_EXPORTER_OTLP_ENDPOINT, a base URL to which HTTP adds
// /v1/traces; else http://localhost:4318/v1/traces (HTTP) or
// http://localhost:4317 (gRPC), a local Collector's plaintext ports. A
// value that is not an http or https URL with a host is an error naming
// where it came from, never a silent fall back to the default.
func (o *OTLPOptions) ResolveEndpoint(proto string, getenv func(string) string) (endpoint, from string, err error) {
	type source struct{ from, value string }
	for _, src := range []source{
		{"--endpoint", o.Endpoint},
		{"$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")},
		{"$OTEL_EXPORTER_OTLP_ENDPOINT", getenv("OTEL_EXPORTER_OTLP_ENDPOINT")},
	} {
		v := strings.TrimSpace(src.value)
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
			example := "http://localhost:4318"
			if proto == "grpc" {
				example = "http://localhost:4317"
			}
			return "", src.from, &cmdutil.InputError{Err: fmt.Errorf("%s %q is not an http or https URL with a host, such as %s", src.from, src.value, example)}
		}
		if proto != "grpc" {
			switch src.from {
			case "--endpoint":
				if u.Path == "" || u.Path == "/" {
					u.Path = "/v1/traces"
				}
			case "$OTEL_EXPORTER_OTLP_ENDPOINT":
				u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
			}
		}
		return u.String(), src.from, nil
	}
	if proto == "grpc" {
		return "http://localhost:4317", "the default", nil
	}
	return "http://localhost:4318/v1/traces", "the default", nil
}

func (o *OTLPOptions) content(getenv func(string) string) bool {
	if o.Content {
		return true
	}
	switch strings.ToLower(getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")) {
	case "true", "1", "span_only", "span_and_event":
		return true
	}
	return false
}

// recordingExporter keeps the first export error, which the batch
// processor would otherwise only log: an export that did not reach the
// collector must fail the command. It counts the spans the collector
// took: all of a batch it accepted, none of one it refused, and of a
// partial success (the collector took some and rejected others) all but
// those it says it rejected.
type recordingExporter struct {
	sdktrace.SpanExporter
	mu       sync.Mutex
	err      error
	spans    int
	rejected int
}

func (r *recordingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := r.SpanExporter.ExportSpans(ctx, spans)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.err == nil {
		r.err = err
	}
	switch n, partial := rejectedSpans(err); {
	case err == nil:
		r.spans += len(spans)
	case partial:
		n = min(max(n, 0), len(spans))
		r.spans += len(spans) - n
		r.rejected += n
	}
	return err
}

// rejectedSpans reads an OTLP partial success out of err: the number of
// spans the collector says it rejected. Both OTLP exporters of the Go SDK
// report it as an error of an internal type whose fields say how many
// items of which kind were rejected; it is found by those fields, which
// is all the SDK exposes of it.
func rejectedSpans(err error) (n int, ok bool) {
	if err == nil {
		return 0, false
	}
	v := reflect.ValueOf(err)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		items, kind := v.FieldByName("RejectedItems"), v.FieldByName("RejectedKind")
		if items.IsValid() && items.CanInt() && kind.IsValid() && kind.Kind() == reflect.String && kind.String() == "spans" {
			return int(items.Int()), true
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		total, found := 0, false
		for _, e := range u.Unwrap() {
			if k, ok := rejectedSpans(e); ok {
				total, found = total+k, true
			} else if e != nil {
				return 0, false // another failure beside it: not a partial success
			}
		}
		return total, found
	case interface{ Unwrap() error }:
		return rejectedSpans(u.Unwrap())
	}
	return 0, false
}

// Pipeline is an OTLP exporter set up for one command: call Export for
// each run, then Close, whose error says whether every span reached the
// collector.
type Pipeline struct {
	tp       *sdktrace.TracerProvider
	exp      *recordingExporter
	content  bool
	endpoint string // where spans go, and where that was named
	url      string // where spans go
}

// NewPipeline connects the OTLP exporter the options and environment
// name. Nothing is sent until a run is exported.
//
// The OpenTelemetry SDK reports its exporters' failures to a handler of
// its own, process-wide, which by default prints each one to stderr; the
// pipeline reports every failure itself (Close), so NewPipeline points
// that handler at log, at debug level: a failure is printed once, and
// --verbose shows what the SDK said.
func NewPipeline(ctx context.Context, o *OTLPOptions, getenv func(string) string, log *slog.Logger) (*Pipeline, error) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Debug("opentelemetry sdk", "err", err)
	}))
	proto, err := o.protocol(getenv)
	if err != nil {
		return nil, err
	}
	endpoint, from, err := o.ResolveEndpoint(proto, getenv)
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	switch proto {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(endpoint))
	default:
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	}
	if err != nil {
		return nil, fmt.Errorf("otlp: set up the %s exporter: %w", proto, err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "twasm"), attribute.String("service.version", build.Version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("otlp: resource: %w", err)
	}
	rec := &recordingExporter{SpanExporter: exp}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(rec, sdktrace.WithBlocking()),
		sdktrace.WithIDGenerator(export.IDGenerator{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithResource(res),
	)
	return &Pipeline{tp: tp, exp: rec, content: o.content(getenv), endpoint: endpoint + " (" + from + ")", url: endpoint}, nil
}

// Export sends one run and the child runs it links to, restricted as
// opts say (FromSeq, ToSeq, RunSpanSent; the pipeline sets Content).
func (p *Pipeline) Export(ctx context.Context, run export.Run, opts export.OTLPOptions) (export.OTLPStats, error) {
	opts.Content = p.content
	return export.ExportOTLP(ctx, p.tp, run, opts)
}

// Endpoint is where the pipeline sends spans.
func (p *Pipeline) Endpoint() string { return p.url }

// Close flushes every span and reports the first span that did not reach
// the collector, with how many did; a partial success, where the
// collector took some spans and rejected others, is an error too.
func (p *Pipeline) Close(ctx context.Context) (sent int, err error) {
	err = p.tp.Shutdown(ctx)
	p.exp.mu.Lock()
	defer p.exp.mu.Unlock()
	if p.exp.err != nil {
		err = errors.Join(p.exp.err, err)
	}
	if err != nil {
		return p.exp.spans, fmt.Errorf("otlp export to %s: %w", p.endpoint, err)
	}
	return p.exp.spans, nil
}
