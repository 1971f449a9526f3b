# syntax=docker/dockerfile:1
# wavegen container image (docs/container.md). `wavegen` is the entrypoint:
#   KRM container function   kustomize/kpt run the image without arguments, so CMD is `krm`
#   watch mode (controller)  args: [watch, ...]
#   anything else            docker run --rm -i IMAGE transform - < bundle.yaml
# PYTHON_IMAGE builds (it needs pip); RUNTIME_IMAGE runs, and needs only the same python3 at the
# same path (hack/image.sh gives it a Debian base without pip). Both default to python:*-slim.
ARG PYTHON_IMAGE=python:3.12-slim-bookworm
ARG RUNTIME_IMAGE=${PYTHON_IMAGE}

# ---- build: wavegen and its dependencies into a virtualenv without pip -------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY wavegen ./wavegen
# kubernetes 37 ships a second, asyncio copy of its generated client (kubernetes/aio, 68 MB) and
# requires aiohttp and its helpers for it; nothing in wavegen imports them, so the image leaves
# them out. Its generated sync client (kubernetes/client, 2,000 modules) is kept compiled only:
# one .pyc per module, no source (benchmarks/results/container.md; the container tests run every
# command, `watch` included).
RUN pip wheel --wheel-dir /wheels . \
    && python3 -m venv --without-pip /opt/wavegen \
    && pip --python /opt/wavegen/bin/python install --no-index --find-links=/wheels /wheels/*.whl \
    && pip --python /opt/wavegen/bin/python uninstall --yes \
        aiohttp aiohttp-retry aiohappyeyeballs aiosignal frozenlist multidict propcache yarl \
    && rm -rf /opt/wavegen/lib/python3*/site-packages/kubernetes/aio \
    && python3 -m compileall -q -b -j 0 /opt/wavegen/lib/python3*/site-packages/kubernetes/client \
    && find /opt/wavegen/lib/python3*/site-packages/kubernetes/client \
        \( -name '*.py' -o -name __pycache__ -prune \) -exec rm -rf {} +

# ---- runtime: the virtualenv only: no pip, no wheels, no compilers, no caches ---------------------
FROM ${RUNTIME_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="wavegen" \
      org.opencontainers.image.description="Roll Kubernetes workloads when the ConfigMaps and Secrets they consume change" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/wavegen/wavegen"
COPY --from=build /opt/wavegen /opt/wavegen
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    PATH=/opt/wavegen/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN useradd --uid 65532 --user-group --no-log-init --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin wavegen \
    && wavegen --version
WORKDIR /work
USER 65532:65532
ENTRYPOINT ["wavegen"]
CMD ["krm"]
