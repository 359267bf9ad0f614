package benchmarks

import (
	"bufio"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Record is what a study needs to be reproduced and compared: the command,
// the software, the machine and the problem. Each run's whole report (in
// runs.json) adds the resolved config, counts, I/O and field.sha256.
type Record struct {
	Kind      Kind      `json:"kind"`
	Command   []string  `json:"command"`
	WorkDir   string    `json:"workdir"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Version   string    `json:"heat_version"`
	Revision  string    `json:"vcs_revision"`
	GoVersion string    `json:"go_version"`
	OS        string    `json:"os"`
	Arch      string    `json:"arch"`
	NumCPU    int       `json:"num_cpu"`
	CPUModel  string    `json:"cpu_model"`
	Host      string    `json:"host"`  // where the study ran
	Hosts     []string  `json:"hosts"` // where the ranks ran

	Transport string      `json:"transport"`
	Launcher  string      `json:"launcher,omitempty"`
	Exec      []string    `json:"exec"`
	Env       []string    `json:"env,omitempty"`
	RunArgs   []string    `json:"run_args"` // the user's problem: -c, --set, --steps
	Shape     []int       `json:"shape"`    // strong: the problem; weak: the base per core
	Steps     int         `json:"steps"`
	Reps      int         `json:"reps"`
	Points    []Resources `json:"points"`
}

func newRecord(o StudyOptions) Record {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	r := Record{Kind: o.Kind, Command: o.Command, WorkDir: wd, Start: time.Now(), Version: o.Version, Revision: o.Revision,
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, NumCPU: runtime.NumCPU(),
		CPUModel: CPUModel(), Host: host, Hosts: []string{}, Transport: o.Transport, Exec: o.Exec, Env: o.Env,
		RunArgs: o.RunArgs, Shape: o.Shape, Steps: o.Steps, Reps: o.Reps, Points: o.Points}
	if o.Transport == "mpi" {
		r.Launcher = o.Launcher
	}
	if r.RunArgs == nil {
		r.RunArgs = []string{}
	}
	return r
}

func (r *Record) addHosts(hosts []string) {
	for _, h := range hosts {
		if !slices.Contains(r.Hosts, h) {
			r.Hosts = append(r.Hosts, h)
		}
	}
}

// CPUModel is the first "model name" of /proc/cpuinfo, or "" where there is
// none (not Linux, or an architecture that names it otherwise).
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
