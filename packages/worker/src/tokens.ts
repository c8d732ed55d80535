/** Every binding of the worker's composition root, in one place. */
export const WorkerTokens = {
  Config: Symbol.for('Worker.Config'),
  Logger: Symbol.for('Worker.Logger'),
  Knex: Symbol.for('Worker.Knex'),
  InvoiceRepository: Symbol.for('Worker.InvoiceRepository'),
  ClientRepository: Symbol.for('Worker.ClientRepository'),
  /** Read replicas (DATABASE_READ_URL) for a render's reads, or null when none is configured. */
  ReadReplicas: Symbol.for('Worker.ReadReplicas'),
  OrderFileRepository: Symbol.for('Worker.OrderFileRepository'),
  FileStorage: Symbol.for('Worker.FileStorage'),
  PdfRenderer: Symbol.for('Worker.PdfRenderer'),
  JobHandlers: Symbol.for('Worker.JobHandlers'),
  JobWorker: Symbol.for('Worker.JobWorker'),
  /** Whether the event loop keeps time (EventLoopWatch), for /health/live. */
  EventLoop: Symbol.for('Worker.EventLoop'),
  Metrics: Symbol.for('Worker.Metrics'),
  PublishEvents: Symbol.for('Worker.PublishEvents'),
  WebhookDeliveryQueue: Symbol.for('Worker.WebhookDeliveryQueue'),
  DeliverWebhook: Symbol.for('Worker.DeliverWebhook'),
  /** Opens webhook secrets at rest (SECRETS_ENCRYPTION_KEYS, or the key in DATA_DIR on a shared SQLite file). */
  SecretCipher: Symbol.for('Worker.SecretCipher'),
  /** The producer side of the queue: an export's renders are sent as bulk jobs. */
  JobQueue: Symbol.for('Worker.JobQueue'),
  RunExport: Symbol.for('Worker.RunExport'),
  /** WorkerProcessTasks: what startWorker starts beside the job workers. */
  ProcessTasks: Symbol.for('Worker.ProcessTasks'),
} as const;
