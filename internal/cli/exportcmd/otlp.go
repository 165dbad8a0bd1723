package exportcmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/spf13/cobra"
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
	// Endpoint is a URL (http://host:4318, or host:4317 style for gRPC
	// with http:// for plaintext); "" lets the SDK read
	// $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / $OTEL_EXPORTER_OTLP_ENDPOINT.
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
	fl.StringVar(&o.Endpoint, prefix+"endpoint", "", "OTLP endpoint base URL; HTTP adds /v1/traces to a URL without a path (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, $OTEL_EXPORTER_OTLP_ENDPOINT, else localhost)")
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
// collector must fail the command.
type recordingExporter struct {
	sdktrace.SpanExporter
	mu    sync.Mutex
	err   error
	spans int
}

func (r *recordingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := r.SpanExporter.ExportSpans(ctx, spans)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.err == nil {
		r.err = err
	}
	if err == nil {
		r.spans += len(spans)
	}
	return err
}

// Pipeline is an OTLP exporter set up for one command: call Export for
// each run, then Close, whose error says whether every span reached the
// collector.
type Pipeline struct {
	tp      *sdktrace.TracerProvider
	exp     *recordingExporter
	content bool
}

// NewPipeline connects the OTLP exporter the options and environment
// name. Nothing is sent until a run is exported.
func NewPipeline(ctx context.Context, o *OTLPOptions, getenv func(string) string) (*Pipeline, error) {
	proto, err := o.protocol(getenv)
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	switch proto {
	case "grpc":
		var opts []otlptracegrpc.Option
		if o.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(o.Endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		var opts []otlptracehttp.Option
		if o.Endpoint != "" {
			u, err := url.Parse(o.Endpoint)
			if err != nil || u.Host == "" {
				return nil, &cmdutil.FlagError{Err: fmt.Errorf("--endpoint %q is not a URL such as http://localhost:4318", o.Endpoint)}
			}
			// Like $OTEL_EXPORTER_OTLP_ENDPOINT, a base URL gets the
			// signal's path.
			if u.Path == "" || u.Path == "/" {
				u.Path = "/v1/traces"
			}
			opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
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
	return &Pipeline{tp: tp, exp: rec, content: o.content(getenv)}, nil
}

// Export sends one run and the child runs it links to.
func (p *Pipeline) Export(ctx context.Context, run export.Run, from uint64) (export.OTLPStats, error) {
	return export.ExportOTLP(ctx, p.tp, run, export.OTLPOptions{Content: p.content, FromSeq: from})
}

// Close flushes every span and reports the first span that did not reach
// the collector, with how many did.
func (p *Pipeline) Close(ctx context.Context) (sent int, err error) {
	err = p.tp.Shutdown(ctx)
	p.exp.mu.Lock()
	defer p.exp.mu.Unlock()
	if p.exp.err != nil {
		err = errors.Join(p.exp.err, err)
	}
	if err != nil {
		return p.exp.spans, fmt.Errorf("otlp export: %w", err)
	}
	return p.exp.spans, nil
}
