package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// podMonitor is the part of the Prometheus Operator's PodMonitor
// (monitoring.coreos.com/v1) that podmonitor.yaml uses, decoded strictly:
// a misspelt field of these fails, but fields the operator has and this
// type lacks are refused too (the operator's Go types would pull its
// whole module into this one for one file).
type podMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Interval    string `json:"interval"`
			HonorLabels bool   `json:"honorLabels"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// argValue is the value of --name=value in args, or "".
func argValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// checkScraped checks that a pod template is scraped where it serves:
// the prometheus.io annotations name the port of its --metrics-addr and
// /metrics, and its container declares that port under the name
// "metrics", which the PodMonitor scrapes.
func checkScraped(name string, meta metav1.ObjectMeta, c corev1.Container) error {
	addr := argValue(c.Args, "metrics-addr")
	_, port, ok := strings.Cut(addr, ":")
	if !ok || port == "" {
		return fmt.Errorf("%s: no --metrics-addr HOST:PORT in %q", name, c.Args)
	}
	a := meta.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != port || a["prometheus.io/path"] != "/metrics" {
		return fmt.Errorf("%s: annotations %v do not scrape port %s at /metrics", name, a, port)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		return p.Name == "metrics" && strconv.Itoa(int(p.ContainerPort)) == port
	}) {
		return fmt.Errorf("%s: no container port named metrics = %s", name, port)
	}
	return nil
}

// checkMonitor checks the PodMonitor against the Job: it selects the
// Job's pods, scrapes their metrics port at /metrics, keeps openload's
// own labels, and scrapes more often than a shard stays up past its end
// (--metrics-grace), so that every shard's final counts are scraped.
func checkMonitor(pm *podMonitor, job metav1.ObjectMeta, c corev1.Container) error {
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil {
		return fmt.Errorf("podmonitor %s: %v", pm.Name, err)
	}
	if !sel.Matches(labels.Set(job.Labels)) {
		return fmt.Errorf("podmonitor %s does not select the job's pods %v", pm.Name, job.Labels)
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		return fmt.Errorf("podmonitor %s: want one endpoint", pm.Name)
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port != "metrics" || ep.Path != "/metrics" || !ep.HonorLabels {
		return fmt.Errorf("podmonitor %s: want port metrics, path /metrics, honorLabels", pm.Name)
	}
	interval, err := time.ParseDuration(ep.Interval)
	if err != nil {
		return fmt.Errorf("podmonitor %s: interval %q: %v", pm.Name, ep.Interval, err)
	}
	grace, err := time.ParseDuration(argValue(c.Args, "metrics-grace"))
	if err != nil {
		return fmt.Errorf("job: --metrics-grace: %v", err)
	}
	if grace <= interval {
		return fmt.Errorf("--metrics-grace %v is not longer than the scrape interval %v: a shard's last counts may never be scraped", grace, interval)
	}
	return nil
}

func TestScrapeConfig(t *testing.T) {
	m := load(t)
	if len(m.podMonitors) != 1 {
		t.Fatalf("want one PodMonitor, got %d", len(m.podMonitors))
	}
	j, d := m.jobs[0], m.deployments[0]
	jc, dc := j.Spec.Template.Spec.Containers[0], d.Spec.Template.Spec.Containers[0]
	if err := checkScraped("job "+j.Name, j.Spec.Template.ObjectMeta, jc); err != nil {
		t.Error(err)
	}
	if err := checkScraped("deployment "+d.Name, d.Spec.Template.ObjectMeta, dc); err != nil {
		t.Error(err)
	}
	pm := m.podMonitors[0]
	if err := checkMonitor(pm, j.Spec.Template.ObjectMeta, jc); err != nil {
		t.Error(err)
	}
	if sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector); err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("podmonitor %s does not select the stub's pods %v", pm.Name, d.Spec.Template.Labels)
	}
	// The run label is shared because every shard gets the same
	// arguments; only the index differs, from the Job.
	if argValue(jc.Args, "shard") != "" {
		t.Error("a fixed --shard: every pod would carry the same shard label")
	}

	// The checks can fail.
	for _, c := range []struct {
		name   string
		mutate func(pm *podMonitor, c *corev1.Container)
	}{
		{"grace below the interval", func(pm *podMonitor, c *corev1.Container) { pm.Spec.PodMetricsEndpoints[0].Interval = "1m" }},
		{"other port", func(pm *podMonitor, c *corev1.Container) { pm.Spec.PodMetricsEndpoints[0].Port = "http" }},
		{"no grace", func(pm *podMonitor, c *corev1.Container) {
			c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--metrics-grace") })
		}},
	} {
		m := load(t)
		pm, c2 := m.podMonitors[0], m.jobs[0].Spec.Template.Spec.Containers[0]
		c.mutate(pm, &c2)
		if err := checkMonitor(pm, m.jobs[0].Spec.Template.ObjectMeta, c2); err == nil {
			t.Errorf("%s: checkMonitor passed", c.name)
		}
	}
	meta := j.Spec.Template.ObjectMeta
	meta.Annotations = map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080", "prometheus.io/path": "/metrics"}
	if checkScraped("job", meta, jc) == nil {
		t.Error("an annotation naming another port passed")
	}
}

// openloadMetrics are the names of openload's own live metrics that the
// dashboard queries (internal/metrics, --metrics-addr on a run), and
// stubMetrics the stub's it queries (servers/stub checks those against
// the stub's collector). A rename there is one edit here.
var (
	openloadMetrics = []string{
		"openload_requests_scheduled_total", "openload_requests_sent_total", "openload_requests_completed_total",
		"openload_request_errors_total", "openload_responses_total", "openload_requests_in_flight",
		"openload_response_time_seconds_bucket", "openload_service_time_seconds_bucket", "openload_send_delay_seconds_bucket",
		"openload_ttft_seconds_bucket", "openload_itl_seconds_bucket", "openload_tpot_seconds_bucket",
		"openload_requests_failed_total", "openload_requests_timed_out_total", "openload_requests_unfinished_total",
		"openload_output_tokens_total", "openload_offered_rate",
	}
	metricName = regexp.MustCompile(`\b(openload|stub)_[a-z_]+\b`)
)

type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Title   string `json:"title"`
		Type    string `json:"type"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// balanced reports whether (), [], {} nest and quotes close in expr.
func balanced(expr string) bool {
	var stack []rune
	pair := map[rune]rune{')': '(', ']': '[', '}': '{'}
	inQuote := false
	for _, r := range expr {
		switch {
		case r == '"':
			inQuote = !inQuote
		case inQuote:
		case r == '(' || r == '[' || r == '{':
			stack = append(stack, r)
		case pair[r] != 0:
			if len(stack) == 0 || stack[len(stack)-1] != pair[r] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return !inQuote && len(stack) == 0
}

// selector is the filter every openload series of the dashboard carries:
// the run, and the shards, points and scenarios picked (All matches a
// series without the label too).
const selector = `{run=~"$run",shard=~"$shard",point=~"$point",scenario=~"$scenario"`

var (
	quantileExpr = regexp.MustCompile(`histogram_quantile\(0\.\d+, sum by \(le(, shard)?\) \((rate|last_over_time)\(openload_[a-z_]+_seconds_bucket` +
		regexp.QuoteMeta(selector) + `(,from="(schedule|send)")?\}\[\$__(rate_interval|range)\]\)\)\)`)
	// window is a range selector: $__rate_interval for rates,
	// $__range for last_over_time, never a fixed window.
	window = regexp.MustCompile(`\[[^\]]*\]`)
)

// TestDashboard: the Grafana dashboard is valid JSON with run and shard
// variables; every query is balanced, filters openload's series by
// $run and $shard, takes quantiles only of summed buckets (never of
// per-shard quantiles), and names only known metrics. Prometheus' own
// PromQL parser is not used: github.com/prometheus/prometheus requires
// some 250 modules (cloud SDKs, Kubernetes, gRPC) for its one package.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana/openload.json")
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatal("grafana/openload.json is not valid JSON")
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grafana/openload.json: %v", err)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Definition
	}
	if !strings.Contains(vars["run"], "run)") {
		t.Errorf("want a variable run (label_values of run): %v", vars)
	}
	for _, v := range []string{"shard", "point", "scenario"} {
		if !strings.Contains(vars[v], `{run=~"$run"}, `+v+")") {
			t.Errorf("want a variable %s (label_values of %s, within $run): %v", v, v, vars)
		}
	}
	exprs := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs++
			e := tg.Expr
			if !balanced(e) {
				t.Errorf("panel %q: unbalanced %s", p.Title, e)
			}
			for _, name := range metricName.FindAllString(e, -1) {
				if strings.HasPrefix(name, "openload_") && !slices.Contains(openloadMetrics, name) {
					t.Errorf("panel %q: unknown metric %s", p.Title, name)
				}
			}
			if strings.Contains(e, "openload_") && strings.Count(e, selector) != strings.Count(e, "openload_") {
				t.Errorf("panel %q: openload series not filtered by $run, $shard, $point and $scenario: %s", p.Title, e)
			}
			// TTFT from the schedule and from the send are two
			// distributions: summing them is neither.
			if strings.Contains(e, "openload_ttft_seconds") && !strings.Contains(e, `from="`) {
				t.Errorf("panel %q: TTFT not split by from: %s", p.Title, e)
			}
			for _, w := range window.FindAllString(e, -1) {
				if w == "[$__rate_interval]" && strings.Contains(e, "rate(") || w == "[$__range]" && strings.Contains(e, "last_over_time(") {
					continue
				}
				t.Errorf("panel %q: window %s: want [$__rate_interval] for rates, [$__range] for last_over_time: %s", p.Title, w, e)
			}
			if strings.Contains(e, "histogram_quantile") && !quantileExpr.MatchString(e) {
				t.Errorf("panel %q: a quantile not of summed buckets: %s", p.Title, e)
			}
			for _, bad := range []string{"avg(histogram_quantile", "avg by", "_p99"} {
				if strings.Contains(e, bad) {
					t.Errorf("panel %q: %q averages quantiles: %s", p.Title, bad, e)
				}
			}
		}
	}
	if exprs == 0 {
		t.Fatal("no queries")
	}
	for _, e := range []string{`sum(rate(x[1m])`, `sum(x{a="b})`} {
		if balanced(e) {
			t.Errorf("balanced(%q) = true", e)
		}
	}
	t.Logf("%d panels, %d queries", len(d.Panels), exprs)
}
