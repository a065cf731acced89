# Strata: `make run` starts a broker, `make test` runs the whole test suite.
GO ?= go

.PHONY: run build test test-deps lint race fuzz bench

run:
	$(GO) run ./cmd/strata serve

build:
	CGO_ENABLED=0 $(GO) build -o strata ./cmd/strata

VERSITYGW_VERSION ?= v1.8.0
FUZZ_EXECS ?= 100000

# test-deps installs what the tests need when it is missing: kcat (Debian
# package) for the kcat tests, and versitygw (an S3-compatible server, built
# with go install) for the object-store tests.
test-deps:
	@command -v versitygw >/dev/null 2>&1 || test -x "$$($(GO) env GOPATH)/bin/versitygw" || { \
		echo "installing versitygw $(VERSITYGW_VERSION), the S3 server the object-store tests run against"; \
		$(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION); }
	@command -v kcat >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			(apt-get update -qq && apt-get install -y -qq kcat) >/dev/null; \
		else echo "kcat is missing: install it (apt-get install kcat); the kcat test will be skipped"; fi; }

# -count=1: the end-to-end tests run a broker binary they build themselves,
# which Go's test cache does not see, so a cached result could be stale.
test: test-deps
	$(GO) vet ./...
	$(MAKE) lint
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" REQUIRE_VERSITYGW=1 $(GO) test -count=1 -tags invariants -timeout 30m ./...
	$(MAKE) race
	$(MAKE) fuzz

# staticcheck, at a pinned version (fetched through the Go module proxy the
# first time); staticcheck.conf says which checks.
STATICCHECK_VERSION ?= v0.8.2
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# The race detector over the packages' tests, then over the broker itself:
# the end-to-end tests run against a broker built with -race, which exits
# with status 66 after reporting a race, and a broker that does not exit 0
# fails its test.
race: test-deps
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" REQUIRE_VERSITYGW=1 $(GO) test -race -count=1 -timeout 30m ./internal/... ./cmd/...
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
		$(GO) build -race -o "$$bin/strata" ./cmd/strata && \
		PATH="$$($(GO) env GOPATH)/bin:$$PATH" REQUIRE_VERSITYGW=1 STRATA_BIN="$$bin/strata" \
		$(GO) test -count=1 -timeout 30m ./test/e2e/

# A short run of every fuzz target; the seed corpora run in `go test` too.
# The budget is a count of executions, not a duration: a duration races the
# fuzz coordinator's deadline on a loaded machine and fails spuriously with
# "context deadline exceeded" (golang/go#75804, fixed only in Go 1.27).
fuzz:
	@$(GO) list -f '{{.ImportPath}}' ./... | while read pkg; do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZ_EXECS)x $$pkg || exit 1; \
		done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/log/ ./internal/record/ ./internal/api/ ./internal/partition/
