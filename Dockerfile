# SchedLab for a lab server: one image for the web server (gunicorn + whitenoise) and the workers.
# docker-compose.yml runs it as `web`, `quick`, `worker` (scale with --scale worker=N) and `beat`.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SCHEDLAB_DATA_DIR=/data \
    MEDIA_ROOT=/data/media \
    STATIC_ROOT=/app/staticfiles \
    SCHEDLAB_STATIC_FROM_FINDERS=False \
    NUMBA_CACHE_DIR=/data/numba-cache

RUN useradd --create-home --uid 1000 schedlab && mkdir -p /data && chown schedlab /data
WORKDIR /app
COPY . .
RUN test -f README.md || echo "# SchedLab" > README.md; \
    pip install --no-cache-dir -e . \
    && SECRET_KEY=collectstatic-only SCHEDLAB_DATA_DIR=/tmp/build python manage.py collectstatic --noinput -v 0 \
    && rm -rf /tmp/build

USER schedlab
VOLUME /data
EXPOSE 8000
# The web server: migrate, create the first admin (SCHEDLAB_ADMIN_USER/PASSWORD or a generated
# password printed in the log once), then gunicorn (processes and threads: webapp/gunicorn_conf.py, from the
# cores or SCHEDLAB_WEB_WORKERS / SCHEDLAB_WEB_THREADS). Workers override the command.
CMD ["sh", "-c", "python manage.py migrate --noinput && python manage.py ensure_admin && exec gunicorn -c python:webapp.gunicorn_conf webapp.wsgi --bind 0.0.0.0:8000 --access-logfile -"]
