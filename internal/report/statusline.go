package report

import (
	"fmt"
	"sort"
	"strings"
)

// statusLine renders status counts as "200 ×1590 · 503 ×10", codes in order.
func statusLine(status map[string]int64) string {
	keys := make([]string, 0, len(status))
	for k := range status {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, status[k]))
	}
	return strings.Join(parts, " · ")
}
