"""How many messages wait in each Celery queue, asked of the broker when `/metrics` is scraped.

A passive declare answers with the queue's message count on every transport Lethe runs on
(kombu's SQLAlchemy transport, Redis, RabbitMQ) and creates nothing. A queue the broker does
not know yet (Redis drops an emptied list; RabbitMQ before a worker declared it) holds nothing.
"""

from __future__ import annotations

from kombu import Connection
from kombu.exceptions import ChannelError

from app.core.celery_app import celery_app


def queue_names() -> list[str]:
    """The queues this installation's workers consume: the default one and any configured."""
    names = {celery_app.conf.task_default_queue}
    names.update(queue.name for queue in celery_app.conf.task_queues or ())
    return sorted(names)


def depths(names: list[str] | None = None) -> dict[str, int]:
    """Each queue's waiting messages."""
    found: dict[str, int] = {}
    with Connection(celery_app.conf.broker_url,
                    transport_options=celery_app.conf.broker_transport_options) as connection:
        for name in names or queue_names():
            # A failed passive declare closes its channel on AMQP: one channel per queue.
            channel = connection.channel()
            try:
                found[name] = int(channel.queue_declare(queue=name, passive=True).message_count)
            except ChannelError:
                found[name] = 0
            finally:
                # kombu's SQLAlchemy transport counts in a transaction it leaves open, which
                # would hold its locks (a TRUNCATE or VACUUM of the queue table waits) and an
                # old snapshot until the next scrape: end it.
                session = getattr(channel, "_session", None)
                if session is not None:
                    session.close()
                channel.close()
    return found
