package main

import (
	"strings"

	"github.com/openload/openload/schedule"
)

// The help of the flags that choose and shape the arrival process
// (--arrival, --seed, and a parameter such as --burstiness) is written
// from schedule's table of processes, so that a new process shows in the
// help without an edit here. Each parameter's flag is the one the load
// command's definitions bind to its field of schedule.Spec (b).

// arrivalUsage is --arrival's help: "arrival process: constant, poisson
// or gamma (with --burstiness)", once b holds every flag's binding.
func arrivalUsage(b fieldBinding) string {
	var names []string
	for _, p := range schedule.Processes() {
		n := p.Name
		if len(p.Params) > 0 {
			flags := make([]string, len(p.Params))
			for i, pa := range p.Params {
				flags[i] = "--" + b["Schedule."+pa.Field]
			}
			n += " (with " + strings.Join(flags, ", ") + ")"
		}
		names = append(names, n)
	}
	return "arrival process: " + joinWords(names, "or")
}

// seedUsage is --seed's help: "seed of the poisson and gamma arrival
// processes", the processes drawn from it.
func seedUsage() string {
	drawn := schedule.NamesOf(func(p schedule.Process) bool { return !p.Exact() })
	return "seed of the " + joinWords(drawn, "and") + " arrival processes"
}

// paramUsage is the help of the flag of a process's parameter, the field
// of schedule.Spec named f: "with --arrival gamma: the gaps' shape k …".
func paramUsage(f string) string {
	p, _ := schedule.ParamOf(f)
	takers := schedule.NamesOf(func(a schedule.Process) bool { return a.Takes(f) })
	return "with --arrival " + joinWords(takers, "or") + ": " + p.Help
}

// joinWords lists words as a sentence does: "a", "a or b", "a, b or c".
func joinWords(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
