-- ledgerflow 0.1.0: project ts02_asof_rates (id 0b000000-0000-4000-8000-000000000002, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_exchange_rates <- dataset exchange_rates (bitemporal, latest active version)

-- lf_stage_1: input; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `from_currency`,
    `to_currency`,
    `rate`,
    `rate_type`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period_from`,
    `_period_to`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_exchange_rates`
  WHERE
    `_period_from` <= :period_start
    AND (
      `_period_to` IS NULL OR `_period_to` > :period_start
    )
)
SELECT
  *
FROM `input`;

-- output_001: operation 1 'Write rates valid for the period' writes table ts02_rates_asof
SELECT
  `from_currency`,
  `to_currency`,
  `rate`,
  `rate_type`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period_from`,
  `_period_to`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

