-- ledgerflow 0.1.0: project ts01_output_only (id 0b000000-0000-4000-8000-000000000001, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_gl <- dataset gl (period, latest active version)

-- lf_stage_1: input; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_gl`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
)
SELECT
  *
FROM `input`;

-- output_001: operation 1 'Write transactions' writes table ts01_transactions
SELECT
  `journal_id`,
  `line_number`,
  `posting_date`,
  `account_code`,
  `cost_center_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `description`,
  `source_system`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

