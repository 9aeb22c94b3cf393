# scout: build, test and demo targets. `make help` lists them.
GO         ?= go
STATICCHECK = $(shell command -v staticcheck || echo $(shell $(GO) env GOPATH)/bin/staticcheck)
SAMPLE     ?= testdata/traces/ps_mixed_np4
BIN         = bin/scout

.PHONY: all build mpi demo test lint vet staticcheck bench fuzz scaling placement rootcause-bench timecorrect-bench hybrid-bench whatif-bench bench-mpi rank-scaling clean help

# The MPI version (bin/scout-mpi) is built when an MPI compiler wrapper exists.
HAVE_MPI := $(shell command -v mpicc >/dev/null 2>&1 && echo yes)

all: build $(if $(HAVE_MPI),mpi)

help:
	@echo "make build   build bin/scout (pure Go, in-process analysis)"
	@echo "make mpi     build bin/scout-mpi (needs libopenmpi-dev) for mpirun -np N bin/scout-mpi TRACE"
	@echo "make demo    build and analyze the bundled sample trace ($(SAMPLE))"
	@echo "make test    vet, staticcheck and the full test suite"
	@echo "make bench   benchmarks (decode speed, bytes/event)"
	@echo "make fuzz    run each fuzz target for FUZZTIME (default 30s)"
	@echo "make scaling weak-scaling experiment: table and plot in scaling/ (MPI=1: under mpirun)"
	@echo "make rank-scaling  1 024 to 65 536 ranks of 100 events each, in-process: time and memory per event"
	@echo "make placement  wall time with 1, 2, 4 MPI processes (TRACE=dir, default: a generated 20 M-event trace)"
	@echo "                (this and the *-bench targets run each configuration REPEAT times, default 3: median and range)"
	@echo "make rootcause-bench  full analysis against wait states only (--single-pass), in-process and mpirun -np 4, 8 M events"
	@echo "make timecorrect-bench  cost of --time-correct on a generated 8 M-event trace with skewed clocks, in-process and mpirun -np 4"
	@echo "make bench-mpi  ring-like and HPCG-like 8 M-event traces: in-process and mpirun -np 1, 2, 4 against the reference analyzer's figures"
	@echo "make whatif-bench  one what-if prediction, a ranking of 10 and scout reduce against the wait-state analysis, 8 M events in-process"
	@echo "make hybrid-bench  an MPI+OpenMP trace of 4 ranks x 4 threads, 8 M events: full analysis and wait states, in-process and mpirun -np 4"

build:
	$(GO) build -o $(BIN) ./cmd/scout

mpi:
	$(GO) build -tags mpi -o bin/scout-mpi ./cmd/scout

demo: build
	./$(BIN) -o scout-demo --csv scout-demo/scout.csv $(SAMPLE)
	@echo "--- scout-demo/trace.stat (first lines):"
	@head -n 8 scout-demo/trace.stat

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(if $(HAVE_MPI),$(GO) vet -tags mpi ./...)

staticcheck:
	@test -x "$(STATICCHECK)" || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	$(STATICCHECK) ./...
	$(if $(HAVE_MPI),$(STATICCHECK) -tags mpi ./...)

lint: vet staticcheck

test: lint
	$(GO) test -race -count=1 -timeout 20m ./...
	$(if $(HAVE_MPI),$(GO) test -tags mpi -c -o bin/mpi.test ./hpc/mpi && mpirun --allow-run-as-root --oversubscribe -np 4 bin/mpi.test)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

FUZZTIME ?= 30s
# Each target by its full name: -fuzz takes a pattern, and a target one
# matches along with another (FuzzRead, FuzzReadMembers) is not fuzzed.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeEvents$$' -fuzztime $(FUZZTIME) ./localtrace/otf2/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeDefs$$' -fuzztime $(FUZZTIME) ./localtrace/otf2/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./localtrace/
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./cube/
	$(GO) test -run '^$$' -fuzz '^FuzzReadMembers$$' -fuzztime $(FUZZTIME) ./cube/
	$(GO) test -run '^$$' -fuzz '^FuzzCombineSizes$$' -fuzztime $(FUZZTIME) ./combine/
	$(GO) test -run '^$$' -fuzz '^FuzzFrames$$' -fuzztime $(FUZZTIME) ./hpc/
	$(GO) test -run '^$$' -fuzz '^FuzzPayload$$' -fuzztime $(FUZZTIME) ./replay/
	$(GO) test -run '^$$' -fuzz '^FuzzWalkPath$$' -fuzztime $(FUZZTIME) ./patterns/

# Weak scaling: 2…64 locations with a fixed number of events per location.
scaling:
	$(GO) run ./cmd/scaling -o scaling $(if $(MPI),--mpi)

# Many ranks with few events each (the scale issue): the same events per
# rank at 1 024 to 65 536 ranks, in-process; table and plot in
# scaling/ranks.
rank-scaling:
	$(GO) run ./cmd/scaling -o scaling/ranks --locations 1024,4096,16384,65536 --events-per-location 100

# Placement: one trace analyzed under mpirun with M = 1, 2, 4 processes.
# The placement benchmarks below run every configuration REPEAT times,
# in rounds, and report the median and the range: this machine's times
# vary by a fifth and more from run to run.
PROCS ?= 1,2,4
REPEAT ?= 3
placement:
	$(GO) run ./cmd/scaling -o scaling --procs $(PROCS) --repeat $(REPEAT) $(if $(TRACE),--trace $(TRACE))

# The cost of the root-cause and critical-path analysis: an 8 M-event,
# 4-rank trace analyzed in full and with --single-pass, in-process
# (processes 0) and under mpirun -np 4.
rootcause-bench:
	$(GO) run ./cmd/scaling -o scaling --procs 0,4 --repeat $(REPEAT) --ranks 4 --events 8000000 --variant "" --variant --single-pass $(if $(TRACE),--trace $(TRACE))

SKEWED := scaling/skewed-4x8M
# The correction's cost: the skewed trace analyzed with --time-correct
# against its corrected copy (scout correct) analyzed as it is.
timecorrect-bench: build
	./$(BIN) tracegen -q --force -o $(SKEWED) --ranks 4 --events 8000000 --seed 1 --clock-skew 20us,1e-5 \
		--phase compute:imbalance=10us,jitter=50us --phase ring:jitter=100us --phase late_sender:delay=20us \
		--phase allreduce:jitter=50us --phase barrier
	rm -rf $(SKEWED)-corrected && ./$(BIN) correct -q -o $(SKEWED)-corrected $(SKEWED)
	$(GO) run ./cmd/scaling -o scaling --procs 0,4 --repeat $(REPEAT) --trace $(SKEWED)-corrected --variant "" --variant --single-pass \
		--variant "@$(SKEWED) --time-correct" --variant "@$(SKEWED) --single-pass --time-correct"

WHATIF := scaling/whatif-ring-8M
# What-if prediction (issue "What-if prediction and trace reduction"):
# one prediction and a ranking against the wait-state analysis, in-process.
whatif-bench: build
	./$(BIN) tracegen -q --force -o $(WHATIF) --ranks 4 --events 8000000 --seed 1 \
		--phase sendrecv_ring:work=2us,jitter=2us
	$(GO) run ./cmd/scaling -o scaling --procs 0 --repeat $(REPEAT) --trace $(WHATIF) --variant --single-pass \
		--variant "whatif --shrink compute=0.5" --variant "whatif --rank 10"

HYBRID := scaling/hybrid-4x4-8M
# A generated MPI+OpenMP trace: imbalanced teams with an explicit barrier,
# a critical section, a lock, and an MPI_Allreduce.
hybrid-bench: build
	./$(BIN) tracegen -q --force -o $(HYBRID) --ranks 4 --threads 4 --events 8000000 \
		--phase omp_barrier:work=100us,imbalance=20us,jitter=10us,lag=2us --phase omp_critical:work=5us,lag=1us \
		--phase omp_lock:work=5us,imbalance=1us --phase wait_nxn:work=50us,imbalance=10us
	$(GO) run ./cmd/scaling -o scaling --procs 0,4 --repeat $(REPEAT) --trace $(HYBRID) --variant "" --variant --single-pass

MPIBENCH := scaling/mpibench
# scout against the reference analyzer's figures on this machine (issue
# "mpirun -np N scout twice as fast..."): ring-like and HPCG-like traces
# of 8 M events on 4 ranks, in-process and under mpirun with 1, 2 and 4
# processes, wait states alone and the full analysis.
bench-mpi: build
	./$(BIN) tracegen -q --force -o $(MPIBENCH)-ring --ranks 4 --events 8000000 --seed 1 \
		--phase sendrecv_ring:work=2us,jitter=2us
	./$(BIN) tracegen -q --force -o $(MPIBENCH)-hpcg --ranks 4 --events 8000000 --seed 1 \
		--phase halo_3d:work=20us,jitter=5us --phase wait_nxn:work=5us,jitter=5us
	$(GO) run ./cmd/scaling -o scaling --procs 0,1,2,4 --repeat $(REPEAT) --trace $(MPIBENCH)-ring --variant --single-pass --variant "" \
		--reference=--single-pass=3.1,101 --reference==12.4,224
	$(GO) run ./cmd/scaling -o scaling --procs 0,1,2,4 --repeat $(REPEAT) --trace $(MPIBENCH)-hpcg --variant --single-pass --variant "" \
		--reference=--single-pass=3.0,87 --reference==8.5,137

clean:
	rm -rf bin scout-demo scaling
