/** Options of the replicas of a cluster (see `docs/clusters.md`). */
export interface ClusterOptions {
  /** Run the ownership protocol even on a store that is not shared between processes. */
  enabled?: boolean | undefined;
  /** This replica's id (default: random). Unique among the replicas sharing the store. */
  replicaId?: string | undefined;
  /**
   * How long an owner holds a session without renewing, ms (default 3,000). A dead owner's
   * sessions are taken over this long after its last renewal; renewals run every third of it.
   */
  leaseMs?: number | undefined;
}
