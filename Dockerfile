FROM python:3.11-slim
WORKDIR /app
ENV PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1
# Pass a CPU wheel index as PIP_EXTRA_INDEX_URL to keep the image small.
ARG PIP_EXTRA_INDEX_URL=""
RUN pip install torch==2.13.0
COPY pyproject.toml README.md ./
COPY ingest ingest
COPY indexes indexes
COPY service service
COPY clients clients
RUN pip install . ./clients/python && ctxsieve prepare
EXPOSE 8000
CMD ["ctxsieve", "serve", "--host", "0.0.0.0", "--port", "8000"]
