.PHONY: demo test lint bench

demo:  ## run wavegen on the example bundle
	bash hack/demo.sh

test:  ## the whole test suite (installs Python deps and the real tools)
	bash hack/test.sh

lint:
	$(HOME)/.cache/wavegen-venv/bin/ruff check wavegen tests benchmarks
	$(HOME)/.cache/wavegen-venv/bin/ruff format --check .
	$(HOME)/.cache/wavegen-venv/bin/mypy wavegen

bench:
	bash benchmarks/run.sh
