package prices

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twasm/twasm/transcript"
)

// Schema is the schema a price file names. Its number is raised by a
// change an older twasm would misread as a whole: a field at the file's
// top level, or a known field given another meaning (doc.go,
// Compatibility).
const Schema = "twasm.prices/1"

// schemaPrefix is what every version of the schema begins with.
const schemaPrefix = "twasm.prices/"

// ErrNewerFormat is the error of Parse for a file written for a newer
// twasm than this one: a later schema, or a field at the file's top
// level this twasm does not know. Load uses the bundled table instead
// and says why; Install refuses it.
var ErrNewerFormat = errors.New("written for a newer twasm")

// infoPrefix begins the name of a field any twasm ignores: a newer
// table's information that cannot change a price.
const infoPrefix = "info_"

//go:embed prices.json
var bundled []byte

// Bundled returns the table compiled into twasm.
func Bundled() *Table {
	t, err := Parse(bundled)
	if err != nil {
		panic("prices: the bundled table does not parse: " + err.Error()) // a test checks it does
	}
	t.Origin = "bundled"
	return t
}

// BundledJSON is the bundled table's file, as embedded.
func BundledJSON() []byte { return bytes.Clone(bundled) }

// Table is a price table.
type Table struct {
	Schema string  `json:"schema"`
	Name   string  `json:"name"`
	Date   string  `json:"date"`
	Note   string  `json:"note,omitempty"`
	Models []Model `json:"models"`

	// Origin says where the table was read from: "bundled" or the path
	// of the installed file (not in the file).
	Origin string `json:"-"`
	// SHA256 is the hex digest of the file's bytes (not in the file).
	SHA256 string `json:"-"`

	byName map[string]*Model
	// byDated holds the ids and aliases that end in a date (a snapshot
	// priced apart from its model, as gpt-4o-2024-05-13 is): matched
	// exactly, before the date-less names.
	byDated map[string]*Model
}

// Model is one model's prices.
type Model struct {
	ID       string   `json:"id"`
	Aliases  []string `json:"aliases,omitempty"`
	Provider string   `json:"provider"`
	Rates    Rates    `json:"usd_per_mtok"`
	Tiers    []Tier   `json:"tiers,omitempty"`
	Sources  []string `json:"sources"`
	Checked  string   `json:"checked"`
	Note     string   `json:"note,omitempty"`
	// Unknown names the first field of the entry (at any depth: its
	// rates, tiers, priority) this twasm does not know, "" when none: a
	// newer twasm's field that may change what the model costs, so the
	// model is not priced (PriceAt says why), rather than priced without
	// it (not in the file).
	Unknown string `json:"-"`
	// BatchPercent is what a request sent through the provider's batch
	// API (OpenAI Batch, Anthropic Message Batches) costs, as a percentage
	// of the standard price, applied to every rate and tier alike; 0 when
	// the table does not know it: a batch request of the model is then
	// not priced (its cost is unknown, not the standard price).
	BatchPercent int `json:"batch_percent,omitempty"`
	// BatchCacheReadStandard charges cached input in a batch request at
	// the standard cache-read rate, not at BatchPercent of it: the
	// provider states the batch discount for input and output but not
	// for cached input (an upper bound: a batch request never costs more
	// than the same request made live).
	BatchCacheReadStandard bool `json:"batch_cache_read_standard,omitempty"`
	// FlexPercent is what a request the provider served at its flex
	// service tier (OpenAI's service_tier "flex") costs, as a percentage
	// of the standard price, applied to every rate and tier alike, cached
	// input included (OpenAI prices flex at its Batch API's rates, with
	// prompt caching's discount on top); 0 when the table does not know
	// it: a flex request of the model is then not priced.
	FlexPercent int `json:"flex_percent,omitempty"`
	// Priority are the rates of a request the provider served at its
	// priority service tier (OpenAI's service_tier "priority"); nil when
	// the table does not know them: a priority request of the model is
	// then not priced.
	Priority *PriorityRates `json:"priority,omitempty"`

	base     rates
	tiers    []tier
	priority rates
}

// PriorityRates are a model's rates at the priority service tier.
// MaxInput, when set, is the largest input (uncached, cache read and
// write) the provider states them for ("excludes long context": OpenAI's
// priority rates are for requests of at most 128K prompt tokens): a
// priority request above it is not priced.
type PriorityRates struct {
	Rates    Rates `json:"usd_per_mtok"`
	MaxInput int64 `json:"max_input_tokens,omitempty"`
}

// Rates are US dollars per million tokens, as decimal strings ("0.30").
type Rates struct {
	Input        string `json:"input"`
	Output       string `json:"output"`
	CacheRead    string `json:"cache_read,omitempty"`
	CacheWrite5m string `json:"cache_write_5m,omitempty"`
	CacheWrite1h string `json:"cache_write_1h,omitempty"`
}

// Tier is the rates of a request whose whole input is above AboveInput
// tokens.
type Tier struct {
	AboveInput int64 `json:"above_input_tokens"`
	Rates      Rates `json:"usd_per_mtok"`
}

// rates are pico-dollars per token (= micro-dollars per million tokens).
type rates struct{ input, output, read, write5m, write1h int64 }

type tier struct {
	above int64
	r     rates
}

// Version names the table as a cost's provenance says it: name@date.
func (t *Table) Version() string { return t.Name + "@" + t.Date }

// dateRE and dateSuffix are compiled on first use, not when the process
// starts: every twasm command links this package, few read prices.
var dateRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`) })

// Parse reads and checks a price file: its schema, a name and a date, and
// for every model an id, a provider, input and output rates, rates that
// parse exactly, tiers in increasing order, at least one source URL and
// the date it was checked; no name (id or alias, normalized) twice.
//
// A file of a later schema, or with a field at its top level this twasm
// does not know, is refused with ErrNewerFormat; a model entry with a
// field this twasm does not know is kept, named by its id and aliases,
// and left unpriced (Model.Unknown). Fields named "info_..." are
// ignored wherever they are.
func Parse(data []byte) (*Table, error) {
	t := &Table{}
	var raw struct {
		Schema string            `json:"schema"`
		Models []json.RawMessage `json:"models"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	if raw.Schema != Schema {
		if v, err := strconv.Atoi(strings.TrimPrefix(raw.Schema, schemaPrefix)); err == nil && strings.HasPrefix(raw.Schema, schemaPrefix) && v > 1 {
			return nil, fmt.Errorf("prices: schema %q (this twasm reads %q): %w", raw.Schema, Schema, ErrNewerFormat)
		}
		return nil, fmt.Errorf("prices: schema %q, want %q", raw.Schema, Schema)
	}
	if f := unknownField(data, reflect.TypeFor[Table](), "models"); f != "" {
		return nil, fmt.Errorf("prices: field %q unknown to this twasm: %w", f, ErrNewerFormat)
	}
	if err := json.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	for i := range t.Models {
		t.Models[i].Unknown = unknownField(raw.Models[i], reflect.TypeFor[Model](), "")
	}
	if t.Name == "" {
		return nil, errors.New("prices: no name")
	}
	if _, err := time.Parse(time.DateOnly, t.Date); err != nil || !dateRE().MatchString(t.Date) {
		return nil, fmt.Errorf("prices: date %q is not YYYY-MM-DD", t.Date)
	}
	if len(t.Models) == 0 {
		return nil, errors.New("prices: no models")
	}
	t.byName, t.byDated = map[string]*Model{}, map[string]*Model{}
	for i := range t.Models {
		m := &t.Models[i]
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("prices: model %d (%q): %w", i+1, m.ID, err)
		}
		for _, n := range append([]string{m.ID}, m.Aliases...) {
			names := t.byName
			k := Normalize(n)
			if d := undated(n); d != k {
				names, k = t.byDated, d
			}
			if other, dup := names[k]; dup {
				return nil, fmt.Errorf("prices: %q names both %q and %q", n, other.ID, m.ID)
			}
			names[k] = m
		}
	}
	sum := sha256.Sum256(data)
	t.SHA256 = hex.EncodeToString(sum[:])
	return t, nil
}

// unknownField is the path of the first field of the JSON value raw
// that the Go type typ does not have (matched as encoding/json matches
// them, case folded; at any depth through structs, pointers and slices),
// "" when every field is known. Fields named "info_..." and the field
// skip are not looked at; a value of the wrong kind is left to the
// decoder to refuse.
func unknownField(raw json.RawMessage, typ reflect.Type, skip string) string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return ""
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == skip || strings.HasPrefix(strings.ToLower(k), infoPrefix) {
				continue
			}
			f, ok := jsonField(typ, k)
			if !ok {
				return k
			}
			if sub := unknownField(obj[k], f.Type, ""); sub != "" {
				if sub[0] != '[' {
					sub = "." + sub
				}
				return k + sub
			}
		}
	case reflect.Slice:
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil {
			return ""
		}
		for i, e := range arr {
			if sub := unknownField(e, typ.Elem(), ""); sub != "" {
				return fmt.Sprintf("[%d].%s", i, sub)
			}
		}
	}
	return ""
}

// jsonField is the exported field of the struct type typ that
// encoding/json decodes the key into.
func jsonField(typ reflect.Type, key string) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// Unpriceable lists the models this twasm leaves unpriced because their
// entries have fields it does not know: "id (field)" each.
func (t *Table) Unpriceable() []string {
	var out []string
	for _, m := range t.Models {
		if m.Unknown != "" {
			out = append(out, fmt.Sprintf("%s (%s)", m.ID, m.Unknown))
		}
	}
	return out
}

func (m *Model) check() error {
	if m.ID == "" {
		return errors.New("no id")
	}
	if m.Provider == "" {
		return errors.New("no provider")
	}
	if len(m.Sources) == 0 {
		return errors.New("no source")
	}
	for _, s := range m.Sources {
		if !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("source %q is not an https URL", s)
		}
	}
	if !dateRE().MatchString(m.Checked) {
		return fmt.Errorf("checked %q is not YYYY-MM-DD", m.Checked)
	}
	var err error
	if m.base, err = m.Rates.parse(); err != nil {
		return err
	}
	last := int64(0)
	for _, t := range m.Tiers {
		if t.AboveInput <= last {
			return fmt.Errorf("tier above %d: tiers must rise, each above 0", t.AboveInput)
		}
		last = t.AboveInput
		r, err := t.Rates.parse()
		if err != nil {
			return fmt.Errorf("tier above %d: %w", t.AboveInput, err)
		}
		m.tiers = append(m.tiers, tier{t.AboveInput, r})
	}
	for _, pc := range []struct {
		name string
		pct  int
	}{{"batch_percent", m.BatchPercent}, {"flex_percent", m.FlexPercent}} {
		if pc.pct < 0 || pc.pct > 100 {
			return fmt.Errorf("%s %d is not between 1 and 100", pc.name, pc.pct)
		}
		if pc.pct == 0 {
			continue
		}
		for _, r := range append([]rates{m.base}, tierRates(m.tiers)...) {
			if _, exact := r.percent(pc.pct); !exact {
				return fmt.Errorf("%s %d of %+v is not a whole number of pico-dollars per token", pc.name, pc.pct, r)
			}
		}
	}
	if pr := m.Priority; pr != nil {
		if pr.MaxInput < 0 {
			return fmt.Errorf("priority max_input_tokens %d is negative", pr.MaxInput)
		}
		if m.priority, err = pr.Rates.parse(); err != nil {
			return fmt.Errorf("priority: %w", err)
		}
	}
	return nil
}

func tierRates(ts []tier) []rates {
	out := make([]rates, len(ts))
	for i, t := range ts {
		out[i] = t.r
	}
	return out
}

// percent is r at pct percent; exact is false when a rate would need a
// fraction of a pico-dollar per token.
func (r rates) percent(pct int) (out rates, exact bool) {
	exact = true
	f := func(v int64) int64 {
		if v*int64(pct)%100 != 0 {
			exact = false
		}
		return v * int64(pct) / 100
	}
	return rates{f(r.input), f(r.output), f(r.read), f(r.write5m), f(r.write1h)}, exact
}

func (r Rates) parse() (rates, error) {
	var out rates
	var err error
	field := func(name, s string, dst *int64, fallback int64, required bool) {
		if err != nil {
			return
		}
		if s == "" {
			if required {
				err = fmt.Errorf("no %s rate", name)
			}
			*dst = fallback
			return
		}
		var v int64
		if v, err = ParseUSD(s); err != nil {
			err = fmt.Errorf("%s rate: %w", name, err)
		} else if v > maxRate {
			err = fmt.Errorf("%s rate %s is above $1,000,000 per million tokens", name, s)
		}
		*dst = v
	}
	field("input", r.Input, &out.input, 0, true)
	field("output", r.Output, &out.output, 0, true)
	field("cache_read", r.CacheRead, &out.read, out.input, false)
	field("cache_write_5m", r.CacheWrite5m, &out.write5m, out.input, false)
	field("cache_write_1h", r.CacheWrite1h, &out.write1h, out.write5m, false)
	return out, err
}

// maxRate bounds a rate: a million dollars per million tokens.
const maxRate = 1_000_000 * 1_000_000

// ParseUSD reads a non-negative decimal amount of dollars ("0.30", "15")
// exactly as micro-dollars; more than six decimals is an error.
func ParseUSD(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 6 || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a decimal of at most 6 places", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/1_000_000-1 {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	return w*1e6 + f, nil
}

var dateSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`) })

// Normalize is the form model names are matched in: lower case, without
// a "vendor/" prefix, a "[...]" suffix or a date suffix.
func Normalize(name string) string {
	return dateSuffix().ReplaceAllString(undated(name), "")
}

// undated is name as Normalize makes it but with its date suffix kept.
func undated(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	if i := strings.IndexByte(n, '['); i > 0 && strings.HasSuffix(n, "]") {
		n = n[:i]
	}
	return n
}

// Lookup returns the model entry a model name matches: an entry named
// with that date (a snapshot priced apart) first, else the entry of the
// name without its date.
func (t *Table) Lookup(model string) (*Model, bool) {
	if m, ok := t.byDated[undated(model)]; ok {
		return m, true
	}
	m, ok := t.byName[Normalize(model)]
	return m, ok
}

// Price is what one usage costs.
type Price struct {
	// Pico is the cost in pico-dollars (10^-12 dollars): exact.
	Pico int64
	// Tier is the input threshold of the tier applied, 0 for the base
	// rates.
	Tier int64
	// TierUnknown says the usage was of several requests whose total
	// input is above the model's first tier (or above the largest input
	// its priority rates are stated for): priced at the base rates (the
	// priority rates), which may be below what was billed.
	TierUnknown bool
	// Batch says the usage was priced at the model's batch rates.
	Batch bool
	// Service is the service tier whose rates priced the usage, other
	// than the standard and batch ones: ServiceFlex or ServicePriority.
	Service string
}

// The service tiers a response may state that are priced apart from
// the standard rates (transcript.Usage.ServiceTier).
const (
	ServiceFlex     = "flex"
	ServicePriority = "priority"
	ServiceBatch    = "batch"
)

// service is how a request is priced.
type service int

const (
	standard service = iota
	batch
	flex
	priority
)

// serviceOf is how a response's stated service tier prices it, or why it
// cannot be priced. The standard rates price no tier stated ("": an
// older transcript, a provider that states none), OpenAI's "default"
// and Anthropic's "standard", and OpenAI's "auto", which a response
// states only when it does not name the tier it was served at and
// which OpenAI documents as the project's tier, "default" unless the
// project is configured otherwise (no capture shows a response served
// otherwise stating it).
func serviceOf(tier string) (service, string) {
	switch tier {
	case "", "default", "standard", "auto":
		return standard, ""
	case ServiceBatch:
		return batch, ""
	case ServiceFlex:
		return flex, ""
	case ServicePriority:
		return priority, ""
	case "scale":
		return standard, "scale tier: billed by reserved capacity, not per token"
	case transcript.ServiceTierMixed:
		return standard, "several service tiers in one total"
	}
	return standard, fmt.Sprintf("service tier %q: not known", tier)
}

// PriceRequest prices the usage of one API request of model; ok is false
// when the table lacks the model.
func (t *Table) PriceRequest(model string, u *transcript.Usage) (Price, bool) {
	p, _, ok := t.price(model, u, true, standard)
	return p, ok
}

// PriceTotal prices usage summed over several requests of model (a
// step's total): the base rates, TierUnknown when the total input is
// above the model's first tier.
func (t *Table) PriceTotal(model string, u *transcript.Usage) (Price, bool) {
	p, _, ok := t.price(model, u, false, standard)
	return p, ok
}

// PriceBatch prices usage of model sent through the provider's batch
// API, one request's (oneRequest) or several summed, as PriceRequest and
// PriceTotal do at the model's batch rates (BatchPercent of each); ok is
// false when the table lacks the model or its batch rate.
func (t *Table) PriceBatch(model string, u *transcript.Usage, oneRequest bool) (Price, bool) {
	p, _, ok := t.price(model, u, oneRequest, batch)
	return p, ok
}

// PriceAt prices usage of model, one request's (oneRequest) or several
// summed, at the service tier it states (u.ServiceTier), or at the
// batch rates when batch is set (the capture is a batch job's results,
// whatever tier its bodies state): the standard rates for no tier,
// "default", "standard" and "auto" (serviceOf), the batch rates for
// "batch", FlexPercent of every rate for "flex", the Priority rates for
// "priority". When ok is false, why says which rate is unknown ("no flex
// rate", "scale tier: ...", "output not stated": a total above the
// input with no output, tokens of a kind not stated) or is "" when the
// table lacks the model.
func (t *Table) PriceAt(model string, u *transcript.Usage, oneRequest, isBatch bool) (p Price, why string, ok bool) {
	svc, why := standard, ""
	if isBatch {
		svc = batch
	} else if u != nil {
		svc, why = serviceOf(u.ServiceTier)
	}
	if why != "" {
		if _, known := t.Lookup(model); !known {
			why = ""
		}
		return Price{}, why, false
	}
	return t.price(model, u, oneRequest, svc)
}

func (t *Table) price(model string, u *transcript.Usage, oneRequest bool, svc service) (Price, string, bool) {
	m, ok := t.Lookup(model)
	switch {
	case !ok:
		return Price{}, "", false
	case m.Unknown != "":
		return Price{}, fmt.Sprintf("price entry field %q unknown to this twasm", m.Unknown), false
	case svc == batch && m.BatchPercent == 0:
		return Price{}, "no batch rate", false
	case svc == flex && m.FlexPercent == 0:
		return Price{}, "no flex rate", false
	case svc == priority && m.Priority == nil:
		return Price{}, "no priority rate", false
	}
	b := u.Billed()
	if b == nil {
		return Price{}, "", true
	}
	v := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	uncached, read, write, write1h, out := v(b.UncachedInputTokens), v(b.CacheReadTokens), v(b.CacheWriteTokens), v(b.CacheWrite1hTokens), v(b.OutputTokens)
	input := uncached + read + write
	if b.OutputTokens == nil && b.TotalTokens != nil && *b.TotalTokens > input {
		// Tokens beyond the input whose kind is not stated (Gemini CLI's
		// stream-json: thoughts in the total only): not 0 output.
		return Price{}, "output not stated", false
	}
	var p Price
	r := m.base
	for _, tr := range m.tiers {
		if input <= tr.above {
			break
		}
		if oneRequest {
			r, p.Tier = tr.r, tr.above
		} else {
			p.TierUnknown = true
		}
	}
	switch svc {
	case batch:
		read := r.read
		r, _ = r.percent(m.BatchPercent) // exact: Parse checked it
		if m.BatchCacheReadStandard {
			r.read = read
		}
		p.Batch = true
	case flex:
		r, _ = r.percent(m.FlexPercent) // exact: Parse checked it
		p.Service = ServiceFlex
	case priority:
		// The priority rates are stated for requests up to MaxInput, below
		// any long-context tier of the model.
		p = Price{Service: ServicePriority}
		if mx := m.Priority.MaxInput; mx > 0 && input > mx {
			if oneRequest {
				return Price{}, fmt.Sprintf("priority above %d input tokens: no rate", mx), false
			}
			p.TierUnknown = true
		}
		r = m.priority
	}
	if p.Pico, ok = sumProducts(uncached, r.input, read, r.read, write-write1h, r.write5m, write1h, r.write1h, out, r.output); !ok {
		return Price{}, "", false // figures no request has (negative, or past $9.2M): not priced
	}
	return p, "", true
}

// sumProducts is a1*b1 + a2*b2 + ... of non-negative pairs; false when a
// figure is negative or the sum does not fit an int64.
func sumProducts(v ...int64) (int64, bool) {
	var sum uint64
	for i := 0; i+1 < len(v); i += 2 {
		if v[i] < 0 || v[i+1] < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(uint64(v[i]), uint64(v[i+1]))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		sum += lo
		if sum > math.MaxInt64 {
			return 0, false
		}
	}
	return int64(sum), true
}

// Cost is money with its provenance (spec §4's cost): MicroUSD is an
// integer of millionths of a dollar, USD the same as a decimal string;
// Source says where it comes from (provider: stated by the provider,
// priced: from the price table Prices, mixed: both, unknown: neither);
// UnpricedModels are the models whose usage the table could not price:
// their cost is unknown, not 0, and not in MicroUSD (a Cost of source
// unknown has no micro_usd or usd in JSON: MarshalJSON). TierUnknown counts
// figures summed over several requests above a long-context threshold,
// priced at the base rates; Batch, Flex and Priority count figures
// priced at those rates.
type Cost struct {
	MicroUSD       int64    `json:"micro_usd"`
	USD            string   `json:"usd"`
	Source         string   `json:"source"`
	Prices         string   `json:"prices,omitempty"`
	UnpricedModels []string `json:"unpriced_models,omitempty"`
	TierUnknown    int      `json:"tier_unknown,omitempty"`
	// Batch counts figures priced at a batch API's rates (the capture
	// says the requests went through OpenAI's Batch API or Anthropic's
	// Message Batches, or their usage states the batch service tier).
	Batch int `json:"batch,omitempty"`
	// Flex and Priority count figures priced at the flex and priority
	// service tiers' rates (their usage states that tier).
	Flex     int `json:"flex,omitempty"`
	Priority int `json:"priority,omitempty"`
}

// MarshalJSON writes c; a cost of unknown source (nothing stated,
// nothing priced: every figure's model unpriced) has no micro_usd and no
// usd, since 0 would read as nothing spent: its source and
// unpriced_models say what is not known.
func (c Cost) MarshalJSON() ([]byte, error) {
	type plain Cost // without this method
	if c.Source != SourceUnknown {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		Source         string   `json:"source"`
		Prices         string   `json:"prices,omitempty"`
		UnpricedModels []string `json:"unpriced_models,omitempty"`
		TierUnknown    int      `json:"tier_unknown,omitempty"`
		Batch          int      `json:"batch,omitempty"`
		Flex           int      `json:"flex,omitempty"`
		Priority       int      `json:"priority,omitempty"`
	}{c.Source, c.Prices, c.UnpricedModels, c.TierUnknown, c.Batch, c.Flex, c.Priority})
}

// Sources of a Cost.
const (
	SourceProvider = "provider"
	SourcePriced   = "priced"
	SourceMixed    = "mixed"
	SourceUnknown  = "unknown"
)

// Text is c as a listing prints it: "$1.0043" on a terminal, the exact
// decimal in a pipe; "?" when nothing is known, "+?" after the known part
// when some models are unpriced.
func (c Cost) Text(tty bool) string {
	if c.Source == SourceUnknown {
		return "?"
	}
	s := FormatMicro(c.MicroUSD)
	if tty {
		s = fmt.Sprintf("$%.4f", float64(c.MicroUSD)/1e6)
	}
	if len(c.UnpricedModels) > 0 {
		s += "+?"
	}
	return s
}

// Micro rounds pico-dollars to micro-dollars, half away from zero.
func Micro(pico int64) int64 {
	if pico < 0 {
		return -Micro(-pico)
	}
	return (pico + 500_000) / 1_000_000
}

// MicroOfUSD is a stated dollar amount (a provider's cost_usd) in
// micro-dollars, rounded to the nearest.
func MicroOfUSD(usd float64) int64 { return int64(math.Round(usd * 1e6)) }

// FormatMicro writes micro-dollars as a decimal number of dollars with
// the zeros after the point trimmed ("0.08619", "12", "-0.5").
func FormatMicro(micro int64) string {
	sign := ""
	if micro < 0 {
		sign, micro = "-", -micro
	}
	s := fmt.Sprintf("%d.%06d", micro/1e6, micro%1e6)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return sign + s
}
