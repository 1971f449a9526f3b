# syntax=docker/dockerfile:1
# wavegen container image (docs/container.md). `wavegen` is the entrypoint:
#   KRM container function   kustomize/kpt run the image without arguments, so CMD is `krm`
#   watch mode (controller)  args: [watch, ...]
#   anything else            docker run --rm -i IMAGE transform - < bundle.yaml
ARG PYTHON_IMAGE=python:3.12-slim-bookworm

# ---- build: wheels for wavegen and its dependencies ------------------------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY wavegen ./wavegen
RUN pip wheel --wheel-dir /wheels .

# ---- runtime: the wheels only, no compilers, no pip cache ----------------------------------------
FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="wavegen" \
      org.opencontainers.image.description="Roll Kubernetes workloads when the ConfigMaps and Secrets they consume change" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/tmp
# the wheels are bind-mounted from the build stage, so no layer keeps them
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels /wheels/*.whl \
    && useradd --uid 65532 --user-group --no-log-init --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin wavegen \
    && wavegen --version
WORKDIR /work
USER 65532:65532
ENTRYPOINT ["wavegen"]
CMD ["krm"]
