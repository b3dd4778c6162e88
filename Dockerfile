# EduFair Web: one image for the web server (gunicorn) and the Celery workers.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
RUN useradd --create-home --uid 1000 edufair && mkdir -p /app/var /app/staticfiles && chown -R edufair /app/var /app/staticfiles
USER edufair

EXPOSE 8000
CMD ["gunicorn", "edufair_web.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4", "--worker-class", "gthread", "--threads", "4", "--keep-alive", "30"]
